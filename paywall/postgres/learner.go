package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

// CreateExam stores a drawn exam; Conflict if its ID exists.
func (db *DB) CreateExam(ctx context.Context, e store.Exam) error {
	if err := e.Check(); err != nil {
		return err
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO exams (id, certification, length, source, questions, minutes, created_at, graded_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, e.ID, e.Certification, e.Length, e.Source, e.Questions, e.Minutes,
		timestamptz(e.CreatedAt), timestamptz(e.GradedAt))
	if _, ok := isUnique(err); ok {
		return fmt.Errorf("postgres: create exam: %w: %w", certbank.Errorf(certbank.Conflict, "exam exists"), err)
	}
	if err != nil {
		return db.fail("create exam", err)
	}
	return nil
}

// ExamByID returns an exam, or NotFound.
func (db *DB) ExamByID(ctx context.Context, id string) (store.Exam, error) {
	var e store.Exam
	var created, graded pgtype.Timestamptz
	err := db.pool.QueryRow(ctx, `SELECT id, certification, length, source, questions, minutes, created_at, graded_at
		FROM exams WHERE id = $1`, id).Scan(&e.ID, &e.Certification, &e.Length, &e.Source, &e.Questions, &e.Minutes, &created, &graded)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Exam{}, certbank.Errorf(certbank.NotFound, "exam not found")
	}
	if err != nil {
		return store.Exam{}, db.fail("exam by id", err)
	}
	e.CreatedAt, e.GradedAt = fromTimestamptz(created), fromTimestamptz(graded)
	return e, nil
}

// FinishExam marks an exam graded if it is not yet and reports whether this
// call did.
func (db *DB) FinishExam(ctx context.Context, id string, at time.Time) (bool, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE exams SET graded_at = $1 WHERE id = $2 AND graded_at IS NULL`, timestamptz(at), id)
	if err != nil {
		return false, db.fail("finish exam", err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	if _, err := db.ExamByID(ctx, id); err != nil {
		return false, err
	}
	return false, nil
}

// AddResponses records graded answers in one statement.
func (db *DB) AddResponses(ctx context.Context, rs []store.Response) error {
	for _, r := range rs {
		if err := r.Check(); err != nil {
			return err
		}
	}
	if len(rs) == 0 {
		return nil
	}
	rows := make([][]any, len(rs))
	for i, r := range rs {
		rows[i] = []any{r.QuestionID, string(r.Chosen), r.Correct, r.Source, r.Attempt, r.Score, timestamptz(r.At)}
	}
	_, err := db.pool.CopyFrom(ctx, pgx.Identifier{"responses"},
		[]string{"question_id", "chosen", "correct", "source", "attempt", "score", "at"}, pgx.CopyFromRows(rows))
	if err != nil {
		return db.fail("add responses", err)
	}
	return nil
}

// Responses returns the answers recorded at or after since, in order.
func (db *DB) Responses(ctx context.Context, since time.Time) ([]store.Response, error) {
	rows, err := db.pool.Query(ctx, `SELECT question_id, chosen, correct, source, attempt, score, at
		FROM responses WHERE at >= $1 ORDER BY seq`, pgtype.Timestamptz{Time: since, Valid: true, InfinityModifier: infinityIfZero(since)})
	if err != nil {
		return nil, db.fail("list responses", err)
	}
	defer rows.Close()
	var out []store.Response
	for rows.Next() {
		var r store.Response
		var chosen string
		var at pgtype.Timestamptz
		if err := rows.Scan(&r.QuestionID, &chosen, &r.Correct, &r.Source, &r.Attempt, &r.Score, &at); err != nil {
			return nil, db.fail("list responses", err)
		}
		r.Chosen, r.At = certbank.Letter(chosen), fromTimestamptz(at)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail("list responses", err)
	}
	return out, nil
}

// infinityIfZero makes the zero time "-infinity", before every response.
func infinityIfZero(t time.Time) pgtype.InfinityModifier {
	if t.IsZero() {
		return pgtype.NegativeInfinity
	}
	return pgtype.Finite
}

const reportColumns = `id, question_id, reason, text, created_at, resolved_at, resolution`

func scanReport(row pgx.Row) (store.Report, error) {
	var r store.Report
	var created, resolved pgtype.Timestamptz
	if err := row.Scan(&r.ID, &r.QuestionID, &r.Reason, &r.Text, &created, &resolved, &r.Resolution); err != nil {
		return store.Report{}, err
	}
	r.CreatedAt, r.ResolvedAt = fromTimestamptz(created), fromTimestamptz(resolved)
	return r, nil
}

// AddReport stores a question report; Conflict if its ID exists.
func (db *DB) AddReport(ctx context.Context, r store.Report) error {
	if err := r.Check(); err != nil {
		return err
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO reports (`+reportColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		r.ID, r.QuestionID, r.Reason, r.Text, timestamptz(r.CreatedAt), timestamptz(r.ResolvedAt), r.Resolution)
	if _, ok := isUnique(err); ok {
		return fmt.Errorf("postgres: add report: %w: %w", certbank.Errorf(certbank.Conflict, "report exists"), err)
	}
	if err != nil {
		return db.fail("add report", err)
	}
	return nil
}

// ReportByID returns a report, or NotFound.
func (db *DB) ReportByID(ctx context.Context, id string) (store.Report, error) {
	r, err := scanReport(db.pool.QueryRow(ctx, `SELECT `+reportColumns+` FROM reports WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
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
		args = append(args, f.QuestionID)
		where = append(where, fmt.Sprintf("question_id = $%d", len(args)))
	}
	q := `SELECT ` + reportColumns + ` FROM reports`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY created_at DESC, id DESC`
	if f.Limit > 0 {
		args = append(args, f.Limit)
		q += fmt.Sprintf(` LIMIT $%d`, len(args))
	}
	rows, err := db.pool.Query(ctx, q, args...)
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
	tag, err := db.pool.Exec(ctx, `UPDATE reports SET resolved_at = $1, resolution = $2 WHERE id = $3 AND resolved_at IS NULL`,
		timestamptz(at), note, id)
	if err != nil {
		return db.fail("resolve report", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	if _, err := db.ReportByID(ctx, id); err != nil {
		return err
	}
	return certbank.Errorf(certbank.Conflict, "report %s is already resolved", id)
}
