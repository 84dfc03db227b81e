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
	"github.com/certbank/certbank/paywall"
)

const paymentColumns = `payer, nonce, amount, resource, network, tx, status, reason, created_at, updated_at`

// scanPayment reads a row of paymentColumns.
func scanPayment(row pgx.Row) (paywall.Payment, error) {
	var p paywall.Payment
	var created, updated pgtype.Timestamptz
	if err := row.Scan(&p.Payer, &p.Nonce, &p.Amount, &p.Resource, &p.Network, &p.Transaction,
		&p.Status, &p.Reason, &created, &updated); err != nil {
		return paywall.Payment{}, err
	}
	p.CreatedAt, p.UpdatedAt = fromTimestamptz(created), fromTimestamptz(updated)
	return p, nil
}

// validStatus reports whether status is one of the ledger's statuses.
func validStatus(status string) bool {
	switch status {
	case paywall.PaymentReserved, paywall.PaymentPending, paywall.PaymentSettled, paywall.PaymentFailed:
		return true
	}
	return false
}

// ReservePayment inserts p with status reserved (whatever p.Status says;
// UpdatedAt defaults to CreatedAt). It fails with Conflict when (payer,
// nonce) is already in the ledger in any status, and with Invalid when p
// has no payer, nonce or creation time.
func (db *DB) ReservePayment(ctx context.Context, p paywall.Payment) error {
	if p.Payer == "" || p.Nonce == "" || p.CreatedAt.IsZero() {
		return certbank.Errorf(certbank.Invalid, "a payment needs a payer, a nonce and a creation time")
	}
	if p.UpdatedAt.IsZero() {
		p.UpdatedAt = p.CreatedAt
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO payments (`+paymentColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		p.Payer, p.Nonce, p.Amount, p.Resource, p.Network, p.Transaction, paywall.PaymentReserved, p.Reason,
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

// UpdatePayment sets the status, transaction, reason and update time of
// (payer, nonce). NotFound if there is no such payment; Invalid for an
// unknown status or the zero time.
func (db *DB) UpdatePayment(ctx context.Context, payer, nonce, status, tx, reason string, at time.Time) error {
	if !validStatus(status) {
		return certbank.Errorf(certbank.Invalid, "unknown payment status %q", status)
	}
	if at.IsZero() {
		return certbank.Errorf(certbank.Invalid, "a payment update needs a time")
	}
	tag, err := db.pool.Exec(ctx, `UPDATE payments SET status = $1, tx = $2, reason = $3, updated_at = $4
		WHERE payer = $5 AND nonce = $6`, status, tx, reason, timestamptz(at), payer, nonce)
	return db.updatedOne(tag, err, "update payment", "payment not found")
}

// TransitionPayment changes (payer, nonce) to status, tx and reason if it
// is in status from with reason fromReason, and reports whether it was.
// The UPDATE locks the row, and a concurrent one re-checks its condition
// on the committed row, so only one transition out of a state succeeds.
func (db *DB) TransitionPayment(ctx context.Context, payer, nonce, from, fromReason, status, tx, reason string, at time.Time) (bool, error) {
	if !validStatus(status) || !validStatus(from) {
		return false, certbank.Errorf(certbank.Invalid, "unknown payment status %q or %q", from, status)
	}
	if at.IsZero() {
		return false, certbank.Errorf(certbank.Invalid, "a payment update needs a time")
	}
	tag, err := db.pool.Exec(ctx, `UPDATE payments SET status = $1, tx = $2, reason = $3, updated_at = $4
		WHERE payer = $5 AND nonce = $6 AND status = $7 AND reason = $8`, status, tx, reason, timestamptz(at), payer, nonce, from, fromReason)
	if err != nil {
		return false, db.fail("transition payment", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleasePayment deletes the reservation (payer, nonce) if it is still in
// status reserved; otherwise, or if there is none, it does nothing.
func (db *DB) ReleasePayment(ctx context.Context, payer, nonce string) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM payments WHERE payer = $1 AND nonce = $2 AND status = $3`,
		payer, nonce, paywall.PaymentReserved)
	if err != nil {
		return db.fail("release payment", err)
	}
	return nil
}

// PaymentByNonce returns one payment, or NotFound.
func (db *DB) PaymentByNonce(ctx context.Context, payer, nonce string) (paywall.Payment, error) {
	p, err := scanPayment(db.pool.QueryRow(ctx,
		`SELECT `+paymentColumns+` FROM payments WHERE payer = $1 AND nonce = $2`, payer, nonce))
	if errors.Is(err, pgx.ErrNoRows) {
		return paywall.Payment{}, certbank.Errorf(certbank.NotFound, "payment not found")
	}
	if err != nil {
		return paywall.Payment{}, db.fail("payment by nonce", err)
	}
	return p, nil
}

// Payments lists the payments that f selects (Since inclusive), newest
// first.
func (db *DB) Payments(ctx context.Context, f paywall.PaymentFilter) ([]paywall.Payment, error) {
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
	ps, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (paywall.Payment, error) { return scanPayment(row) })
	if err != nil {
		return nil, db.fail("list payments", err)
	}
	return ps, nil
}
