package paywall

// The learner routes: mock exams, practice answers and question reports,
// over the learn service.

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/learn"
	"github.com/certbank/certbank/paywall/store"
	"github.com/gorilla/mux"
)

// Body limits of the learner routes: an exam's answers (up to a few
// hundred "<uuid>": "A" pairs), a report, a practice answer.
const (
	maxExamAnswersBody = 64 << 10
	maxReportBody      = 8 << 10
	maxAnswerBody      = 1 << 10
)

type examCert struct {
	Slug     string `json:"slug"`
	Name     string `json:"name"`
	Provider string `json:"provider"`
	ExamCode string `json:"exam_code,omitempty"`
}

type examDomain struct {
	Name      string `json:"name"`
	Weight    int    `json:"weight"`
	Questions int    `json:"questions"`
}

type examMeta struct {
	Length    string       `json:"length"`
	Source    string       `json:"source"`
	Questions int          `json:"questions"`
	Requested int          `json:"requested"`
	Minutes   int          `json:"minutes"`
	CreatedAt time.Time    `json:"created_at"`
	ExpiresAt time.Time    `json:"expires_at"`
	Domains   []examDomain `json:"domains"`
	Submit    string       `json:"submit"`
	Note      string       `json:"note,omitempty"`
}

// handleExam serves GET /api/v1/exam: a mock exam drawn with the key in
// x-api-key, or from the free sample without one.
func (s *Server) handleExam(w http.ResponseWriter, r *http.Request) error {
	ar := s.draw.Arrive()
	defer ar.Leave()
	p, err := newParams(r, "certification", "length")
	if err != nil {
		return err
	}
	k, err := s.optionalKey(r)
	if err != nil {
		return err
	}
	st, err := s.learn.StartExam(r.Context(), k, p.str("certification"), strings.ToLower(p.str("length")), &ar)
	if k != nil && st.Draw.Tier.Name != "" {
		setRateHeaders(w, st.Draw.Tier, st.Draw.Usage, st.Draw.Now)
	}
	if err != nil {
		return err
	}
	meta := examMeta{Length: st.Exam.Length, Source: st.Exam.Source, Questions: len(st.Questions), Requested: st.Requested,
		Minutes: st.Exam.Minutes, CreatedAt: st.Exam.CreatedAt, ExpiresAt: st.ExpiresAt,
		Submit: strings.Replace(certbank.PathExamAnswers, "{id}", st.Exam.ID, 1)}
	count := map[string]int{}
	for _, e := range st.Questions {
		count[e.Q.Domain]++
	}
	for _, d := range st.Cert.Domains {
		meta.Domains = append(meta.Domains, examDomain{d.Name, d.Weight, count[d.Name]})
	}
	if len(st.Questions) < st.Requested {
		if st.Exam.Source == "free_sample" {
			meta.Note = "without an API key the exam is drawn from the free sample, which is shorter than the real exam; use a key for a full-length exam"
		} else {
			meta.Note = "the bank has fewer verified questions of this certification than the real exam asks, so the exam and its time are shorter"
		}
	}
	b := []byte(`{"id":`)
	b, _ = appendJSON(b, st.Exam.ID)
	b = append(b, `,"certification":`...)
	b, _ = appendJSON(b, examCert{st.Cert.Slug, st.Cert.Name, st.Cert.Provider, st.Cert.ExamCode})
	b = append(b, `,"questions":[`...)
	for i, e := range st.Questions {
		if i > 0 {
			b = append(b, ',')
		}
		b = e.AppendKeyed(b, false)
	}
	b = append(b, `],"meta":`...)
	b, _ = appendJSON(b, meta)
	b = append(b, "}\n"...)
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	return nil
}

func appendJSON(b []byte, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	return append(b, j...), err
}

// optionalKey returns the key in x-api-key, nil without one, and
// Unauthorized for a malformed, unknown or revoked key.
func (s *Server) optionalKey(r *http.Request) (*store.Key, error) {
	if strings.TrimSpace(r.Header.Get("x-api-key")) == "" {
		return nil, nil
	}
	k, err := s.authenticate(r.Context(), r)
	if err != nil {
		return nil, err
	}
	return &k, nil
}

type examAnswersRequest struct {
	Answers map[string]string `json:"answers"`
}

type gradedQuestion struct {
	ID            string            `json:"id"`
	Question      string            `json:"question"`
	Options       map[string]string `json:"options"`
	Domain        string            `json:"domain"`
	Objective     string            `json:"objective,omitempty"`
	Difficulty    string            `json:"difficulty"`
	Chosen        *string           `json:"chosen"`
	CorrectAnswer string            `json:"correct_answer"`
	Correct       bool              `json:"correct"`
	Explanation   string            `json:"explanation"`
}

type examReport struct {
	ID            string           `json:"id"`
	Certification examCert         `json:"certification"`
	GradedAt      time.Time        `json:"graded_at"`
	Score         learn.Tally      `json:"score"`
	Answered      int              `json:"answered"`
	ByDomain      []learn.Tally    `json:"by_domain"`
	ByDifficulty  []learn.Tally    `json:"by_difficulty"`
	Questions     []gradedQuestion `json:"questions"`
}

// reportJSON is the JSON of a graded exam, shared by REST and MCP.
func reportJSON(rep learn.Report) examReport {
	out := examReport{ID: rep.Exam.ID, Certification: examCert{rep.Cert.Slug, rep.Cert.Name, rep.Cert.Provider, rep.Cert.ExamCode},
		GradedAt: rep.Exam.GradedAt, Score: rep.Score, Answered: rep.Answered, ByDomain: rep.ByDomain, ByDifficulty: rep.ByDifficulty,
		Questions: []gradedQuestion{}}
	out.Score.Name = "total"
	for _, g := range rep.Questions {
		t := g.Entry.Text()
		q := gradedQuestion{ID: t.ID, Question: t.Question, Options: t.Options, Domain: t.Domain, Objective: g.Entry.Q.Objective, Difficulty: t.Difficulty,
			CorrectAnswer: string(g.Entry.Q.Answer), Correct: g.Correct}
		if t.Explanation != nil {
			q.Explanation = *t.Explanation
		}
		if g.Chosen != "" {
			c := string(g.Chosen)
			q.Chosen = &c
		}
		out.Questions = append(out.Questions, q)
	}
	return out
}

// handleExamAnswers serves POST /api/v1/exam/{id}/answers: grades the exam
// once and returns the report with every explanation.
func (s *Server) handleExamAnswers(w http.ResponseWriter, r *http.Request) error {
	var req examAnswersRequest
	if err := decodeBody(w, r, maxExamAnswersBody, &req, `{"answers": {"<question id>": "A", …}}`); err != nil {
		return err
	}
	rep, err := s.learn.GradeExam(r.Context(), mux.Vars(r)["id"], req.Answers)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, reportJSON(rep))
	return nil
}

type answerRequest struct {
	QuestionID string `json:"question_id"`
	Answer     string `json:"answer"`
}

// handleAnswers serves POST /api/v1/answers: a study hub records a
// practice answer it graded, for the item statistics. It answers 204 and
// says nothing about correctness.
func (s *Server) handleAnswers(w http.ResponseWriter, r *http.Request) error {
	var req answerRequest
	if err := decodeBody(w, r, maxAnswerBody, &req, `{"question_id": "…", "answer": "A"}`); err != nil {
		return err
	}
	if err := s.learn.PracticeAnswer(r.Context(), s.clientAddr(r), req.QuestionID, req.Answer); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type reportRequest struct {
	QuestionID string `json:"question_id"`
	Reason     string `json:"reason"`
	Text       string `json:"text"`
}

// handleReports serves POST /api/v1/reports: a learner reports a question
// believed wrong.
func (s *Server) handleReports(w http.ResponseWriter, r *http.Request) error {
	var req reportRequest
	if err := decodeBody(w, r, maxReportBody, &req, `{"question_id": "…", "reason": "wrong_key", "text": "…"}`); err != nil {
		return err
	}
	rep, err := s.learn.ReportQuestion(r.Context(), s.clientAddr(r), req.QuestionID, req.Reason, req.Text)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, map[string]any{"id": rep.ID, "question_id": rep.QuestionID, "reason": rep.Reason, "status": "open",
		"message": "Thank you: the report is queued for review."})
	return nil
}

// decodeBody reads one JSON object of at most max bytes into v, refusing
// unknown fields; shape is shown in the error.
func decodeBody(w http.ResponseWriter, r *http.Request, max int64, v any, shape string) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return certbank.Errorf(certbank.Invalid, "send the body as JSON with Content-Type: application/json")
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, max))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return certbank.Errorf(certbank.Invalid, "the body must be a JSON object %s of at most %d bytes: %v", shape, max, err)
	}
	if dec.More() {
		return certbank.Errorf(certbank.Invalid, "the body must hold one JSON object")
	}
	return nil
}
