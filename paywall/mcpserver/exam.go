package mcpserver

// The learner tools: start_mock_exam, submit_mock_exam and report_question,
// over the learn service.

import (
	"context"
	"strings"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/draw"
	"github.com/certbank/certbank/paywall/learn"
)

type startExamIn struct {
	Certification string `json:"certification" jsonschema:"certification slug from list_certifications"`
	Length        string `json:"length,omitempty" jsonschema:"full (the real exam's number of questions and time, the default) or half"`
}

type startExamOut struct {
	ExamID        string        `json:"exam_id" jsonschema:"pass it to submit_mock_exam"`
	Certification string        `json:"certification"`
	Length        string        `json:"length"`
	Source        string        `json:"source" jsonschema:"free_sample without an API key, bank with one"`
	Minutes       int           `json:"minutes" jsonschema:"the time allowed"`
	ExpiresAt     time.Time     `json:"expires_at"`
	Requested     int           `json:"requested" jsonschema:"the real exam's length (or half of it)"`
	Questions     []mcpQuestion `json:"questions"`
}

type submitExamIn struct {
	ExamID  string            `json:"exam_id" jsonschema:"the exam_id from start_mock_exam"`
	Answers map[string]string `json:"answers" jsonschema:"question id to the chosen letter A, B, C or D; unanswered questions count as wrong"`
}

// ExamReport is a graded mock exam, as the REST route returns it.
type ExamReport struct {
	ExamID        string        `json:"exam_id"`
	Certification string        `json:"certification"`
	Score         learn.Tally   `json:"score"`
	Answered      int           `json:"answered"`
	ByDomain      []learn.Tally `json:"by_domain"`
	ByDifficulty  []learn.Tally `json:"by_difficulty"`
	Questions     []gradedOut   `json:"questions"`
}

type gradedOut struct {
	ID            string `json:"id"`
	Domain        string `json:"domain"`
	Difficulty    string `json:"difficulty"`
	Chosen        string `json:"chosen,omitempty"`
	Correct       bool   `json:"correct"`
	CorrectAnswer string `json:"correct_answer"`
	Explanation   string `json:"explanation"`
}

type reportIn struct {
	QuestionID string `json:"question_id" jsonschema:"the id of the question"`
	Reason     string `json:"reason" jsonschema:"wrong_key, ambiguous, outdated, typo or other"`
	Text       string `json:"text,omitempty" jsonschema:"what is wrong, up to 1,000 characters"`
}

type reportOut struct {
	ReportID string `json:"report_id"`
	Status   string `json:"status"`
}

// learnErr words a learn service error for a model; internal errors are
// logged and hidden.
func (s *server) learnErr(tool string, err error) error {
	if certbank.ErrorCode(err) == certbank.Internal {
		s.cfg.Logger.Error("mcp "+tool+" failed", "err", err)
		return toolErr("the request could not be completed; retry shortly")
	}
	if s.cfg.Rejected != nil {
		switch code := certbank.ErrorCode(err); code {
		case certbank.RateLimited, certbank.MonthlyLimitExceeded:
			s.cfg.Rejected(code)
		}
	}
	return toolErr("%s", certbank.ErrorMessage(err))
}

func (s *server) startExam(ctx context.Context, in startExamIn) (startExamOut, error) {
	if strings.TrimSpace(in.Certification) == "" {
		return startExamOut{}, toolErr("certification is required: a slug from list_certifications")
	}
	st, err := s.cfg.Learn.StartExam(ctx, draw.KeyFrom(ctx), in.Certification, strings.ToLower(in.Length), nil)
	if err != nil {
		return startExamOut{}, s.learnErr(certbank.ToolStartMockExam, err)
	}
	out := startExamOut{ExamID: st.Exam.ID, Certification: st.Cert.Slug, Length: st.Exam.Length, Source: st.Exam.Source,
		Minutes: st.Exam.Minutes, ExpiresAt: st.ExpiresAt, Requested: st.Requested, Questions: []mcpQuestion{}}
	for _, e := range st.Questions {
		out.Questions = append(out.Questions, toMCPQuestion(e, false))
	}
	return out, nil
}

func (s *server) submitExam(ctx context.Context, in submitExamIn) (ExamReport, error) {
	rep, err := s.cfg.Learn.GradeExam(ctx, strings.TrimSpace(in.ExamID), in.Answers)
	if err != nil {
		return ExamReport{}, s.learnErr(certbank.ToolSubmitMockExam, err)
	}
	out := ExamReport{ExamID: rep.Exam.ID, Certification: rep.Cert.Slug, Score: rep.Score, Answered: rep.Answered,
		ByDomain: rep.ByDomain, ByDifficulty: rep.ByDifficulty, Questions: []gradedOut{}}
	out.Score.Name = "total"
	for _, g := range rep.Questions {
		out.Questions = append(out.Questions, gradedOut{ID: g.Entry.Q.ID, Domain: g.Entry.Q.Domain, Difficulty: string(g.Entry.Q.Difficulty),
			Chosen: string(g.Chosen), Correct: g.Correct, CorrectAnswer: string(g.Entry.Q.Answer), Explanation: *g.Entry.Text().Explanation})
	}
	return out, nil
}

func (s *server) report(ctx context.Context, in reportIn) (reportOut, error) {
	r, err := s.cfg.Learn.ReportQuestion(ctx, learn.ClientFrom(ctx), strings.TrimSpace(in.QuestionID), in.Reason, in.Text)
	if err != nil {
		return reportOut{}, s.learnErr(certbank.ToolReportQuestion, err)
	}
	return reportOut{ReportID: r.ID, Status: "open"}, nil
}
