package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

// CreateExam stores a drawn exam; Conflict if its ID exists.
func (db *DB) CreateExam(ctx context.Context, e store.Exam) error {
	if err := e.Check(); err != nil {
		return err
	}
	_, err := db.write.ExecContext(ctx, `INSERT INTO exams (id, certification, length, source, questions, minutes, created_at, graded_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, e.ID, e.Certification, e.Length, e.Source, strings.Join(e.Questions, ","), e.Minutes,
		micros(e.CreatedAt), micros(e.GradedAt))
	if err != nil && isUnique(err) && !db.closed.Load() {
		return fmt.Errorf("sqlite: create exam: %w: %w", certbank.Errorf(certbank.Conflict, "exam exists"), err)
	}
	if err != nil {
		return db.fail("create exam", err)
	}
	return nil
}

// ExamByID returns an exam, or NotFound.
func (db *DB) ExamByID(ctx context.Context, id string) (store.Exam, error) {
	var e store.Exam
	var qs string
	var created, graded sql.NullInt64
	err := db.read.QueryRowContext(ctx, `SELECT id, certification, length, source, questions, minutes, created_at, graded_at
		FROM exams WHERE id = ?`, id).Scan(&e.ID, &e.Certification, &e.Length, &e.Source, &qs, &e.Minutes, &created, &graded)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Exam{}, certbank.Errorf(certbank.NotFound, "exam not found")
	}
	if err != nil {
		return store.Exam{}, db.fail("exam by id", err)
	}
	e.Questions = strings.Split(qs, ",")
	e.CreatedAt, e.GradedAt = fromMicros(created), fromMicros(graded)
	return e, nil
}

// FinishExam marks an exam graded if it is not yet and reports whether this
// call did.
func (db *DB) FinishExam(ctx context.Context, id string, at time.Time) (bool, error) {
	res, err := db.write.ExecContext(ctx, `UPDATE exams SET graded_at = ? WHERE id = ? AND graded_at IS NULL`, micros(at), id)
	if err != nil {
		return false, db.fail("finish exam", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, db.fail("finish exam", err)
	}
	if n == 1 {
		return true, nil
	}
	if _, err := db.ExamByID(ctx, id); err != nil {
		return false, err
	}
	return false, nil
}

// AddResponses records graded answers in one transaction.
func (db *DB) AddResponses(ctx context.Context, rs []store.Response) error {
	for _, r := range rs {
		if err := r.Check(); err != nil {
			return err
		}
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return db.fail("add responses", err)
	}
	defer tx.Rollback()
	for _, r := range rs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO responses (question_id, chosen, correct, source, attempt, score, at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, r.QuestionID, string(r.Chosen), r.Correct, r.Source, r.Attempt, r.Score, micros(r.At)); err != nil {
			return db.fail("add responses", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return db.fail("add responses", err)
	}
	return nil
}

// Responses returns the answers recorded at or after since, in order.
func (db *DB) Responses(ctx context.Context, since time.Time) ([]store.Response, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT question_id, chosen, correct, source, attempt, score, at
		FROM responses WHERE at >= ? ORDER BY seq`, since.UnixMicro())
	if err != nil {
		return nil, db.fail("list responses", err)
	}
	defer rows.Close()
	var out []store.Response
	for rows.Next() {
		var r store.Response
		var chosen string
		var at sql.NullInt64
		if err := rows.Scan(&r.QuestionID, &chosen, &r.Correct, &r.Source, &r.Attempt, &r.Score, &at); err != nil {
			return nil, db.fail("list responses", err)
		}
		r.Chosen, r.At = certbank.Letter(chosen), fromMicros(at)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail("list responses", err)
	}
	return out, nil
}

const reportColumns = `id, question_id, reason, text, created_at, resolved_at, resolution`

func scanReport(row interface{ Scan(...any) error }) (store.Report, error) {
	var r store.Report
	var created, resolved sql.NullInt64
	if err := row.Scan(&r.ID, &r.QuestionID, &r.Reason, &r.Text, &created, &resolved, &r.Resolution); err != nil {
		return store.Report{}, err
	}
	r.CreatedAt, r.ResolvedAt = fromMicros(created), fromMicros(resolved)
	return r, nil
}

// AddReport stores a question report; Conflict if its ID exists.
func (db *DB) AddReport(ctx context.Context, r store.Report) error {
	if err := r.Check(); err != nil {
		return err
	}
	_, err := db.write.ExecContext(ctx, `INSERT INTO reports (`+reportColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.QuestionID, r.Reason, r.Text, micros(r.CreatedAt), micros(r.ResolvedAt), r.Resolution)
	if err != nil && isUnique(err) && !db.closed.Load() {
		return fmt.Errorf("sqlite: add report: %w: %w", certbank.Errorf(certbank.Conflict, "report exists"), err)
	}
	if err != nil {
		return db.fail("add report", err)
	}
	return nil
}

// ReportByID returns a report, or NotFound.
func (db *DB) ReportByID(ctx context.Context, id string) (store.Report, error) {
	r, err := scanReport(db.read.QueryRowContext(ctx, `SELECT `+reportColumns+` FROM reports WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Report{}, certbank.Errorf(certbank.NotFound, "report not found")
	}
	if err != nil {
		return store.Report{}, db.fail("report by id", err)
	}
	return r, nil
}

// Reports lists the reports f selects, newest first.
func (db *DB) Reports(ctx context.Context, f store.ReportFilter) ([]store.Report, error) {
	var where []string
	var args []any
	if f.Open {
		where = append(where, "resolved_at IS NULL")
	}
	if f.QuestionID != "" {
		where, args = append(where, "question_id = ?"), append(args, f.QuestionID)
	}
	q := `SELECT ` + reportColumns + ` FROM reports`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY created_at DESC, id DESC`
	if f.Limit > 0 {
		q, args = q+` LIMIT ?`, append(args, f.Limit)
	}
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, db.fail("list reports", err)
	}
	defer rows.Close()
	var out []store.Report
	for rows.Next() {
		r, err := scanReport(rows)
		if err != nil {
			return nil, db.fail("list reports", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail("list reports", err)
	}
	return out, nil
}

// ResolveReport closes an open report: NotFound if there is none, Conflict
// if it is resolved already.
func (db *DB) ResolveReport(ctx context.Context, id, note string, at time.Time) error {
	if at.IsZero() {
		return certbank.Errorf(certbank.Invalid, "resolving a report needs a time")
	}
	res, err := db.write.ExecContext(ctx, `UPDATE reports SET resolved_at = ?, resolution = ? WHERE id = ? AND resolved_at IS NULL`,
		micros(at), note, id)
	if err != nil {
		return db.fail("resolve report", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return db.fail("resolve report", err)
	} else if n == 1 {
		return nil
	}
	if _, err := db.ReportByID(ctx, id); err != nil {
		return err
	}
	return certbank.Errorf(certbank.Conflict, "report %s is already resolved", id)
}
