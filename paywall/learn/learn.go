// Package learn is what learners do besides drawing questions: full-length
// mock exams, drawn by the draw service and graded once with a report by
// domain and difficulty; the anonymous record of every graded answer that
// the item statistics (package items) are computed from; and reports of
// questions a learner believes wrong. The REST routes and the MCP tools are
// thin doors over it. It knows no HTTP.
package learn

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/bank"
	"github.com/certbank/certbank/paywall/draw"
	"github.com/certbank/certbank/paywall/quota"
	"github.com/certbank/certbank/paywall/store"
)

// Store is what the service keeps: exams, responses and reports, and the
// windowed counters its rate limits use. store.Store satisfies it.
type Store interface {
	store.LearnerStore
	Hit(ctx context.Context, name string, window time.Time) (int, error)
}

// Limits of the learner routes.
const (
	// ExamTTL is how long a drawn exam may be graded.
	ExamTTL = 7 * 24 * time.Hour
	// ReportsPerHour is how many reports one client address may file in a
	// clock hour.
	ReportsPerHour = 10
	// PracticeAnswersPerMinute is how many practice answers one client
	// address may record in a minute.
	PracticeAnswersPerMinute = 120
)

// Exam lengths.
const (
	Full = "full"
	Half = "half"
)

// Service runs mock exams, records answers and takes reports.
type Service struct {
	draw *draw.Service
	ix   *bank.Index
	st   Store
	now  func() time.Time
	log  *slog.Logger
}

// New returns the service over the draw service d and the store st.
func New(d *draw.Service, st Store, now func() time.Time, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{draw: d, ix: d.Index(), st: st, now: now, log: log}
}

// Started is a drawn mock exam, its questions without answers.
type Started struct {
	Exam      store.Exam
	Cert      *certbank.Certification
	Questions []*bank.Entry
	// Requested is the real exam's length (or half of it); Questions may
	// be fewer when the bank or the free sample is smaller.
	Requested int
	ExpiresAt time.Time
	Draw      draw.Result // the tier and usage, for a keyed exam
}

// Length returns the number of questions and minutes of an exam of the
// given length ("full", "half" or "" for full).
func Length(c *certbank.Certification, length string) (questions, minutes int, err error) {
	switch length {
	case "", Full:
		return c.ExamQuestions, c.ExamMinutes, nil
	case Half:
		return (c.ExamQuestions + 1) / 2, (c.ExamMinutes + 1) / 2, nil
	}
	return 0, 0, certbank.Errorf(certbank.Invalid, "length %q is not full or half", length)
}

// StartExam draws a mock exam of certification slug for k (nil: from the
// free sample) and stores it; the learner grades it with GradeExam.
func (s *Service) StartExam(ctx context.Context, k *store.Key, slug, length string, ar *quota.Arrival) (Started, error) {
	c, err := s.draw.Cert(slug, true)
	if err != nil {
		return Started{}, err
	}
	if length == "" {
		length = Full
	}
	n, minutes, err := Length(c, length)
	if err != nil {
		return Started{}, err
	}
	res, err := s.draw.Exam(ctx, draw.ExamQuery{Key: k, Cert: c, Count: n, Arrival: ar})
	if err != nil {
		return Started{Draw: res}, err
	}
	if len(res.Picked) == 0 {
		return Started{Draw: res}, certbank.Errorf(certbank.InsufficientStock, "%s has no questions to draw an exam from yet", c.Slug)
	}
	// A shorter exam gets a proportionally shorter time, at least a minute.
	if got := len(res.Picked); got < n {
		minutes = max(1, (minutes*got+n-1)/n)
	}
	now := res.Now.UTC()
	e := store.Exam{ID: newID("ex_"), Certification: c.Slug, Length: length, Source: res.Source, Minutes: minutes, CreatedAt: now}
	for _, q := range res.Picked {
		e.Questions = append(e.Questions, q.Q.ID)
	}
	if err := s.st.CreateExam(ctx, e); err != nil {
		return Started{Draw: res}, err
	}
	return Started{Exam: e, Cert: c, Questions: res.Picked, Requested: n, ExpiresAt: now.Add(ExamTTL), Draw: res}, nil
}

// Graded is one question of a graded exam.
type Graded struct {
	Entry   *bank.Entry
	Chosen  certbank.Letter // "" unanswered
	Correct bool
}

// Tally counts correct answers of a group of questions.
type Tally struct {
	Name    string `json:"name"`
	Correct int    `json:"correct"`
	Total   int    `json:"total"`
	Percent int    `json:"percent"`
}

func (t *Tally) add(ok bool) {
	t.Total++
	if ok {
		t.Correct++
	}
	t.Percent = t.Correct * 100 / t.Total
}

// Report is a graded exam: its score, by domain and by difficulty, and
// every question with the answer given.
type Report struct {
	Exam         store.Exam
	Cert         *certbank.Certification
	Score        Tally // Name is empty
	Answered     int
	ByDomain     []Tally // in blueprint order, domains with questions only
	ByDifficulty []Tally // easy, medium, hard, those with questions only
	Questions    []Graded
}

// GradeExam grades exam id once. Every answer must be for a question of
// the exam and a letter A-D; questions without an answer count as wrong.
// Unknown or expired exams are NotFound, a second grading is Conflict, and
// bad answers are Invalid; in all three nothing is stored. The answers are
// then recorded anonymously for the item statistics.
func (s *Service) GradeExam(ctx context.Context, id string, answers map[string]string) (Report, error) {
	now := s.now().UTC()
	if !strings.HasPrefix(id, "ex_") || len(id) != len("ex_")+32 {
		return Report{}, certbank.Errorf(certbank.NotFound, "no exam %q; start one with GET /api/v1/exam", id)
	}
	e, err := s.st.ExamByID(ctx, id)
	if certbank.ErrorCode(err) == certbank.NotFound || (err == nil && now.After(e.CreatedAt.Add(ExamTTL))) {
		return Report{}, certbank.Errorf(certbank.NotFound, "no exam %q, or it expired (exams may be graded for %d days); start a new one", id, int(ExamTTL.Hours()/24))
	}
	if err != nil {
		return Report{}, err
	}
	if !e.GradedAt.IsZero() {
		return Report{}, certbank.Errorf(certbank.Conflict, "exam %s was already graded at %s; each exam is graded once, start a new one", id, e.GradedAt.Format(time.RFC3339))
	}
	c, ok := s.ix.Cert(e.Certification)
	if !ok {
		return Report{}, certbank.Errorf(certbank.NotFound, "exam %s is for a certification no longer served", id)
	}
	in := make(map[string]bool, len(e.Questions))
	for _, q := range e.Questions {
		in[q] = true
	}
	chosen := make(map[string]certbank.Letter, len(answers))
	for qid, a := range answers {
		if !in[qid] {
			return Report{}, certbank.Errorf(certbank.Invalid, "question %q is not in exam %s; answer only its questions", qid, id)
		}
		l := certbank.Letter(strings.ToUpper(strings.TrimSpace(a)))
		if l.Index() < 0 {
			return Report{}, certbank.Errorf(certbank.Invalid, "the answer to %s must be A, B, C or D, not %q", qid, a)
		}
		chosen[qid] = l
	}
	r := Report{Exam: e, Cert: c}
	domains := map[string]*Tally{}
	for _, d := range c.Domains {
		domains[d.Name] = &Tally{Name: d.Name}
	}
	diffs := map[certbank.Difficulty]*Tally{}
	for _, d := range certbank.Difficulties {
		diffs[d] = &Tally{Name: string(d)}
	}
	for _, qid := range e.Questions {
		en, ok := s.ix.ByID(qid)
		if !ok {
			continue // withdrawn from the bank since: not graded
		}
		g := Graded{Entry: en, Chosen: chosen[qid], Correct: chosen[qid] == en.Q.Answer}
		r.Questions = append(r.Questions, g)
		r.Score.add(g.Correct)
		if g.Chosen != "" {
			r.Answered++
		}
		if t := domains[en.Q.Domain]; t != nil {
			t.add(g.Correct)
		}
		if t := diffs[en.Q.Difficulty]; t != nil {
			t.add(g.Correct)
		}
	}
	for _, d := range c.Domains {
		if t := domains[d.Name]; t.Total > 0 {
			r.ByDomain = append(r.ByDomain, *t)
		}
	}
	for _, d := range certbank.Difficulties {
		if t := diffs[d]; t.Total > 0 {
			r.ByDifficulty = append(r.ByDifficulty, *t)
		}
	}
	won, err := s.st.FinishExam(ctx, id, now)
	if err != nil {
		return Report{}, err
	}
	if !won {
		return Report{}, certbank.Errorf(certbank.Conflict, "exam %s was already graded; each exam is graded once, start a new one", id)
	}
	r.Exam.GradedAt = now
	// The statistics are worth less than the learner's report: a failure
	// to record them is logged, not returned.
	score := 0.0
	if r.Score.Total > 0 {
		score = float64(r.Score.Correct) / float64(r.Score.Total)
	}
	attempt := attemptToken(id)
	rs := make([]store.Response, 0, len(r.Questions))
	for _, g := range r.Questions {
		rs = append(rs, store.Response{QuestionID: g.Entry.Q.ID, Chosen: g.Chosen, Correct: g.Correct, Source: store.SourceExam,
			Attempt: attempt, Score: score, At: now.Truncate(time.Hour)})
	}
	if err := s.st.AddResponses(ctx, rs); err != nil {
		s.log.Error("mock exam graded, but its answers were not recorded for the item statistics", "err", err)
	}
	return r, nil
}

// RecordAnswer records one graded practice answer (hub practice or the MCP
// check_answer tool) anonymously and reports whether it was right.
// Unknown questions are NotFound; the caller must already be allowed to
// see the answer (draw.Service.MayCheck), as it learns it here.
func (s *Service) RecordAnswer(ctx context.Context, e *bank.Entry, chosen certbank.Letter, source string) (bool, error) {
	if chosen.Index() < 0 {
		return false, certbank.Errorf(certbank.Invalid, "answer must be A, B, C or D, not %q", chosen)
	}
	ok := chosen == e.Q.Answer
	err := s.st.AddResponses(ctx, []store.Response{{QuestionID: e.Q.ID, Chosen: chosen, Correct: ok, Source: source, Score: -1,
		At: s.now().UTC().Truncate(time.Hour)}})
	return ok, err
}

// PracticeAnswer records a practice answer sent by a study hub for
// question id, within the per-address rate limit. It answers nothing
// about correctness (the hub grades locally), so it reveals no key.
func (s *Service) PracticeAnswer(ctx context.Context, client, id, answer string) error {
	e, ok := s.ix.ByID(id)
	if !ok {
		return certbank.Errorf(certbank.NotFound, "no published question %q", id)
	}
	l := certbank.Letter(strings.ToUpper(strings.TrimSpace(answer)))
	if l.Index() < 0 {
		return certbank.Errorf(certbank.Invalid, "answer must be A, B, C or D, not %q", answer)
	}
	if err := s.limit(ctx, "answers:"+client, time.Minute, PracticeAnswersPerMinute, "answers"); err != nil {
		return err
	}
	_, err := s.RecordAnswer(ctx, e, l, store.SourcePractice)
	return err
}

// ReportQuestion files a learner's report on question id from a client
// address, within the per-address rate limit.
func (s *Service) ReportQuestion(ctx context.Context, client, id, reason, text string) (store.Report, error) {
	if _, ok := s.ix.ByID(id); !ok {
		return store.Report{}, certbank.Errorf(certbank.NotFound, "no published question %q", id)
	}
	text = strings.TrimSpace(text)
	r := store.Report{ID: newID("rp_"), QuestionID: id, Reason: reason, Text: text, CreatedAt: s.now().UTC()}
	if !utf8.ValidString(text) {
		return store.Report{}, certbank.Errorf(certbank.Invalid, "text must be UTF-8")
	}
	if err := r.Check(); err != nil {
		return store.Report{}, certbank.Errorf(certbank.Invalid, "%s; reason is one of %s, text at most %d characters",
			certbank.ErrorMessage(err), strings.Join(store.ReportReasons, ", "), store.ReportTextMax)
	}
	if err := s.limit(ctx, "reports:"+client, time.Hour, ReportsPerHour, "reports"); err != nil {
		return store.Report{}, err
	}
	return r, s.st.AddReport(ctx, r)
}

// limit counts one event of name in the current window and refuses it
// (RateLimited, to retry at the next window) beyond max.
func (s *Service) limit(ctx context.Context, name string, window time.Duration, max int, what string) error {
	now := s.now().UTC()
	start := now.Truncate(window)
	n, err := s.st.Hit(ctx, name, start)
	if err != nil {
		return err
	}
	if n > max {
		next := start.Add(window)
		return quota.NewLimitError(certbank.Errorf(certbank.RateLimited, "too many %s from this address (at most %d per %s); try again after %s",
			what, max, strings.TrimPrefix(window.String(), "1"), next.Format(time.RFC3339)), next.Sub(now))
	}
	return nil
}

// newID returns prefix and 128 random bits in hex: an exam or report id
// that cannot be guessed.
func newID(prefix string) string {
	var b [16]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// attemptToken ties an exam's responses together for the statistics
// without storing the exam id (which would let anyone holding the
// statistics read the exam).
func attemptToken(examID string) string {
	sum := sha256.Sum256([]byte("attempt:" + examID))
	return hex.EncodeToString(sum[:8])
}

type clientCtx struct{}

// WithClient returns ctx carrying the requesting client's address, for the
// rate limits of the doors that cannot pass it as an argument (MCP tools).
func WithClient(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, clientCtx{}, addr)
}

// ClientFrom returns the address WithClient put in ctx, or "unknown".
func ClientFrom(ctx context.Context) string {
	if a, ok := ctx.Value(clientCtx{}).(string); ok && a != "" {
		return a
	}
	return "unknown"
}
