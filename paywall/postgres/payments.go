package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

const paymentColumns = `payer, nonce, amount, resource, network, tx, status, reason, created_at, updated_at`

// scanPayment reads a row of paymentColumns.
func scanPayment(row pgx.Row) (store.Payment, error) {
	var p store.Payment
	var created, updated pgtype.Timestamptz
	if err := row.Scan(&p.Payer, &p.Nonce, &p.Amount, &p.Resource, &p.Network, &p.Transaction,
		&p.Status, &p.Reason, &created, &updated); err != nil {
		return store.Payment{}, err
	}
	p.CreatedAt, p.UpdatedAt = fromTimestamptz(created), fromTimestamptz(updated)
	return p, nil
}

// ReservePayment inserts p with status reserved (whatever p.Status says;
// UpdatedAt defaults to CreatedAt). It fails with Conflict when (payer,
// nonce) is already in the ledger in any status, and with Invalid when p
// has no payer, nonce or creation time.
func (db *DB) ReservePayment(ctx context.Context, p store.Payment) error {
	if p.Payer == "" || p.Nonce == "" || p.CreatedAt.IsZero() {
		return certbank.Errorf(certbank.Invalid, "a payment needs a payer, a nonce and a creation time")
	}
	if p.UpdatedAt.IsZero() {
		p.UpdatedAt = p.CreatedAt
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO payments (`+paymentColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		p.Payer, p.Nonce, p.Amount, p.Resource, p.Network, p.Transaction, store.Reserved, p.Reason,
		timestamptz(p.CreatedAt), timestamptz(p.UpdatedAt))
	if _, ok := isUnique(err); ok {
		return fmt.Errorf("postgres: reserve payment: %w: %w",
			certbank.Errorf(certbank.Conflict, "this payment authorization has already been used"), err)
	}
	if err != nil {
		return db.fail("reserve payment", err)
	}
	return nil
}

// UpdatePayment sets the state, transaction and update time of (payer,
// nonce). NotFound if there is no such payment; Invalid for an
// unknown status or the zero time.
func (db *DB) UpdatePayment(ctx context.Context, payer, nonce string, u store.Update) error {
	if err := u.Check(); err != nil {
		return err
	}
	tag, err := db.pool.Exec(ctx, `UPDATE payments SET status = $1, tx = $2, reason = $3, updated_at = $4
		WHERE payer = $5 AND nonce = $6`, u.To.Status, u.Transaction, u.To.Reason, timestamptz(u.At), payer, nonce)
	return db.updatedOne(tag, err, "update payment", "payment not found")
}

// TransitionPayment applies t's update to (t.Payer, t.Nonce) if it is in
// state t.From, and reports whether it was.
// The UPDATE locks the row, and a concurrent one re-checks its condition
// on the committed row, so only one transition out of a state succeeds.
func (db *DB) TransitionPayment(ctx context.Context, t store.Transition) (bool, error) {
	if err := t.Check(); err != nil {
		return false, err
	}
	tag, err := db.pool.Exec(ctx, `UPDATE payments SET status = $1, tx = $2, reason = $3, updated_at = $4
		WHERE payer = $5 AND nonce = $6 AND status = $7 AND reason = $8`, t.To.Status, t.Transaction, t.To.Reason, timestamptz(t.At), t.Payer, t.Nonce, t.From.Status, t.From.Reason)
	if err != nil {
		return false, db.fail("transition payment", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleasePayment deletes the reservation (payer, nonce) if it is still in
// status reserved; otherwise, or if there is none, it does nothing.
func (db *DB) ReleasePayment(ctx context.Context, payer, nonce string) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM payments WHERE payer = $1 AND nonce = $2 AND status = $3`,
		payer, nonce, store.Reserved)
	if err != nil {
		return db.fail("release payment", err)
	}
	return nil
}

// PaymentByNonce returns one payment, or NotFound.
func (db *DB) PaymentByNonce(ctx context.Context, payer, nonce string) (store.Payment, error) {
	p, err := scanPayment(db.pool.QueryRow(ctx,
		`SELECT `+paymentColumns+` FROM payments WHERE payer = $1 AND nonce = $2`, payer, nonce))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Payment{}, certbank.Errorf(certbank.NotFound, "payment not found")
	}
	if err != nil {
		return store.Payment{}, db.fail("payment by nonce", err)
	}
	return p, nil
}

// Payments lists the payments that f selects (Since inclusive), newest
// first.
func (db *DB) Payments(ctx context.Context, f store.PaymentFilter) ([]store.Payment, error) {
	var where []string
	var args []any
	if f.Status != "" {
		args = append(args, f.Status)
		where = append(where, fmt.Sprintf("status = $%d", len(args)))
	}
	if !f.Since.IsZero() {
		args = append(args, timestamptz(f.Since))
		where = append(where, fmt.Sprintf("created_at >= $%d", len(args)))
	}
	q := `SELECT ` + paymentColumns + ` FROM payments`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY created_at DESC, payer DESC, nonce DESC`
	if f.Limit > 0 {
		args = append(args, f.Limit)
		q += fmt.Sprintf(` LIMIT $%d`, len(args))
	}
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, db.fail("list payments", err)
	}
	ps, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Payment, error) { return scanPayment(row) })
	if err != nil {
		return nil, db.fail("list payments", err)
	}
	return ps, nil
}
