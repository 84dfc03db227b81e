package store

import (
	"context"
	"slices"
	"time"

	"github.com/certbank/certbank"
)

// LearnerStore keeps what learners leave behind: the mock exams drawn, the
// anonymous graded answers that the item statistics are computed from, and
// the reports of questions believed wrong. Nothing in it names a learner:
// no key ID, no address.
type LearnerStore interface {
	// CreateExam stores a drawn exam. Conflict if its ID exists; Invalid
	// without an ID, a certification, questions or a creation time.
	CreateExam(ctx context.Context, e Exam) error
	// ExamByID returns an exam, or NotFound.
	ExamByID(ctx context.Context, id string) (Exam, error)
	// FinishExam marks an exam graded at the given time if it is not yet,
	// and reports whether this call did: of any number of concurrent calls,
	// in any instance, exactly one gets true. NotFound if there is no
	// such exam.
	FinishExam(ctx context.Context, id string, at time.Time) (bool, error)

	// AddResponses records graded answers, all or none.
	AddResponses(ctx context.Context, rs []Response) error
	// Responses returns the graded answers recorded at or after since, in
	// the order they were recorded.
	Responses(ctx context.Context, since time.Time) ([]Response, error)

	// AddReport stores a question report. Conflict if its ID exists;
	// Invalid without an ID, a question, a valid reason or a creation time.
	AddReport(ctx context.Context, r Report) error
	// ReportByID returns a report, or NotFound.
	ReportByID(ctx context.Context, id string) (Report, error)
	// Reports lists the reports f selects, newest first.
	Reports(ctx context.Context, f ReportFilter) ([]Report, error)
	// ResolveReport closes an open report with a note. NotFound if there
	// is no such report; Conflict if it is already resolved (nothing
	// changes).
	ResolveReport(ctx context.Context, id, note string, at time.Time) error
}

// Exam is a drawn mock exam: which questions, in which order. Its ID is
// the only way to reach it (an unguessable token), and grading is allowed
// once.
type Exam struct {
	ID            string
	Certification string
	Length        string   // "full" or "half"
	Source        string   // "bank" (drawn with a key) or "free_sample"
	Questions     []string // question IDs in the order served
	Minutes       int      // the time allowed
	CreatedAt     time.Time
	GradedAt      time.Time // zero until graded
}

// Check returns an Invalid error for an exam that cannot be stored.
func (e Exam) Check() error {
	if e.ID == "" || e.Certification == "" || len(e.Questions) == 0 || e.CreatedAt.IsZero() {
		return certbank.Errorf(certbank.Invalid, "an exam needs an ID, a certification, questions and a creation time")
	}
	return nil
}

// Response is one graded answer, kept anonymously: the question, the letter
// chosen, whether it was the key, where it was answered and, for a mock
// exam, an attempt token (a hash of the exam ID, never the ID itself) with
// the attempt's total score, so that an item's discrimination can be
// computed.
type Response struct {
	QuestionID string
	Chosen     certbank.Letter // "" when a mock-exam question was left unanswered
	Correct    bool
	Source     string  // "practice", "exam" or "mcp"
	Attempt    string  // "" outside a mock exam
	Score      float64 // the attempt's share correct, 0..1; -1 outside a mock exam
	At         time.Time
}

// Response sources.
const (
	SourcePractice = "practice"
	SourceExam     = "exam"
	SourceMCP      = "mcp"
)

// Check returns an Invalid error for a response that cannot be stored.
func (r Response) Check() error {
	if r.QuestionID == "" || r.At.IsZero() {
		return certbank.Errorf(certbank.Invalid, "a response needs a question and a time")
	}
	if r.Chosen != "" && r.Chosen.Index() < 0 {
		return certbank.Errorf(certbank.Invalid, "a response's letter must be A, B, C or D")
	}
	switch r.Source {
	case SourcePractice, SourceExam, SourceMCP:
	default:
		return certbank.Errorf(certbank.Invalid, "unknown response source %q", r.Source)
	}
	return nil
}

// Report is a learner's report that a question is wrong, ambiguous,
// outdated or mistyped.
type Report struct {
	ID         string
	QuestionID string
	Reason     string // one of ReportReasons
	Text       string // optional, at most ReportTextMax characters
	CreatedAt  time.Time
	ResolvedAt time.Time // zero while open
	Resolution string    // the operator's note
}

// Open reports whether the report awaits an operator.
func (r Report) Open() bool { return r.ResolvedAt.IsZero() }

// ReportReasons are the reasons a report may give.
var ReportReasons = []string{"wrong_key", "ambiguous", "outdated", "typo", "other"}

// ReportTextMax is the most characters a report's text may have.
const ReportTextMax = 1000

// Check returns an Invalid error for a report that cannot be stored.
func (r Report) Check() error {
	if r.ID == "" || r.QuestionID == "" || r.CreatedAt.IsZero() {
		return certbank.Errorf(certbank.Invalid, "a report needs an ID, a question and a creation time")
	}
	if !slices.Contains(ReportReasons, r.Reason) {
		return certbank.Errorf(certbank.Invalid, "unknown report reason %q", r.Reason)
	}
	if n := len([]rune(r.Text)); n > ReportTextMax {
		return certbank.Errorf(certbank.Invalid, "a report's text is at most %d characters (got %d)", ReportTextMax, n)
	}
	return nil
}

// ReportFilter selects reports.
type ReportFilter struct {
	Open       bool   // only reports not yet resolved
	QuestionID string // "" for any
	Limit      int    // 0 for no limit
}
