package memstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

// CreateExam stores a drawn exam.
func (s *Store) CreateExam(ctx context.Context, e store.Exam) error {
	if err := e.Check(); err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.exams[e.ID]; ok {
		return certbank.Errorf(certbank.Conflict, "exam %s exists", e.ID)
	}
	e.Questions = slices.Clone(e.Questions)
	e.CreatedAt, e.GradedAt = micro(e.CreatedAt), micro(e.GradedAt)
	s.exams[e.ID] = e
	return nil
}

// ExamByID returns an exam, or NotFound.
func (s *Store) ExamByID(ctx context.Context, id string) (store.Exam, error) {
	if err := s.lock(); err != nil {
		return store.Exam{}, err
	}
	defer s.mu.Unlock()
	e, ok := s.exams[id]
	if !ok {
		return store.Exam{}, certbank.Errorf(certbank.NotFound, "exam not found")
	}
	e.Questions = slices.Clone(e.Questions)
	return e, nil
}

// FinishExam marks an exam graded once.
func (s *Store) FinishExam(ctx context.Context, id string, at time.Time) (bool, error) {
	if err := s.lock(); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	e, ok := s.exams[id]
	if !ok {
		return false, certbank.Errorf(certbank.NotFound, "exam not found")
	}
	if !e.GradedAt.IsZero() {
		return false, nil
	}
	e.GradedAt = micro(at)
	s.exams[id] = e
	return true, nil
}

// AddResponses records graded answers, all or none.
func (s *Store) AddResponses(ctx context.Context, rs []store.Response) error {
	for _, r := range rs {
		if err := r.Check(); err != nil {
			return err
		}
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	for _, r := range rs {
		r.At = micro(r.At)
		s.resps = append(s.resps, r)
	}
	return nil
}

// Responses returns the answers recorded at or after since.
func (s *Store) Responses(ctx context.Context, since time.Time) ([]store.Response, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []store.Response
	for _, r := range s.resps {
		if !r.At.Before(micro(since)) {
			out = append(out, r)
		}
	}
	return out, nil
}

// AddReport stores a question report.
func (s *Store) AddReport(ctx context.Context, r store.Report) error {
	if err := r.Check(); err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.reports[r.ID]; ok {
		return certbank.Errorf(certbank.Conflict, "report %s exists", r.ID)
	}
	r.CreatedAt, r.ResolvedAt = micro(r.CreatedAt), micro(r.ResolvedAt)
	s.reports[r.ID] = r
	return nil
}

// ReportByID returns a report, or NotFound.
func (s *Store) ReportByID(ctx context.Context, id string) (store.Report, error) {
	if err := s.lock(); err != nil {
		return store.Report{}, err
	}
	defer s.mu.Unlock()
	r, ok := s.reports[id]
	if !ok {
		return store.Report{}, certbank.Errorf(certbank.NotFound, "report not found")
	}
	return r, nil
}

// Reports lists reports, newest first.
func (s *Store) Reports(ctx context.Context, f store.ReportFilter) ([]store.Report, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []store.Report
	for _, r := range s.reports {
		if (!f.Open || r.Open()) && (f.QuestionID == "" || r.QuestionID == f.QuestionID) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b store.Report) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// ResolveReport closes an open report.
func (s *Store) ResolveReport(ctx context.Context, id, note string, at time.Time) error {
	if at.IsZero() {
		return certbank.Errorf(certbank.Invalid, "resolving a report needs a time")
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	r, ok := s.reports[id]
	if !ok {
		return certbank.Errorf(certbank.NotFound, "report not found")
	}
	if !r.Open() {
		return certbank.Errorf(certbank.Conflict, "report %s is already resolved", id)
	}
	r.ResolvedAt, r.Resolution = micro(at), note
	s.reports[id] = r
	return nil
}
