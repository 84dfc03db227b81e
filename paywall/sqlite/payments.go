package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall"
)

const paymentColumns = `payer, nonce, amount, resource, network, tx, status, reason, created_at, updated_at`

// scanPayment reads a row of paymentColumns.
func scanPayment(row interface{ Scan(...any) error }) (paywall.Payment, error) {
	var p paywall.Payment
	var created, updated sql.NullInt64
	if err := row.Scan(&p.Payer, &p.Nonce, &p.Amount, &p.Resource, &p.Network, &p.Transaction,
		&p.Status, &p.Reason, &created, &updated); err != nil {
		return paywall.Payment{}, err
	}
	p.CreatedAt, p.UpdatedAt = fromMicros(created), fromMicros(updated)
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
	_, err := db.write.ExecContext(ctx, `INSERT INTO payments (`+paymentColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.Payer, p.Nonce, p.Amount, p.Resource, p.Network, p.Transaction, paywall.PaymentReserved, p.Reason,
		micros(p.CreatedAt), micros(p.UpdatedAt))
	if err != nil {
		if isUnique(err) && !db.closed.Load() {
			return fmt.Errorf("sqlite: reserve payment: %w: %w",
				certbank.Errorf(certbank.Conflict, "this payment authorization has already been used"), err)
		}
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
	res, err := db.write.ExecContext(ctx, `UPDATE payments SET status = ?, tx = ?, reason = ?, updated_at = ?
		WHERE payer = ? AND nonce = ?`, status, tx, reason, micros(at), payer, nonce)
	return db.updatedOne(res, err, "update payment", "payment not found")
}

// TransitionPayment changes (payer, nonce) to status, tx and reason if it
// is in status from with reason fromReason, and reports whether it was.
func (db *DB) TransitionPayment(ctx context.Context, payer, nonce, from, fromReason, status, tx, reason string, at time.Time) (bool, error) {
	if !validStatus(status) || !validStatus(from) {
		return false, certbank.Errorf(certbank.Invalid, "unknown payment status %q or %q", from, status)
	}
	if at.IsZero() {
		return false, certbank.Errorf(certbank.Invalid, "a payment update needs a time")
	}
	res, err := db.write.ExecContext(ctx, `UPDATE payments SET status = ?, tx = ?, reason = ?, updated_at = ?
		WHERE payer = ? AND nonce = ? AND status = ? AND reason = ?`, status, tx, reason, micros(at), payer, nonce, from, fromReason)
	if err != nil {
		return false, db.fail("transition payment", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, db.fail("transition payment", err)
	}
	return n == 1, nil
}

// ReleasePayment deletes the reservation (payer, nonce) if it is still in
// status reserved; otherwise, or if there is none, it does nothing.
func (db *DB) ReleasePayment(ctx context.Context, payer, nonce string) error {
	_, err := db.write.ExecContext(ctx, `DELETE FROM payments WHERE payer = ? AND nonce = ? AND status = ?`,
		payer, nonce, paywall.PaymentReserved)
	if err != nil {
		return db.fail("release payment", err)
	}
	return nil
}

// PaymentByNonce returns one payment, or NotFound.
func (db *DB) PaymentByNonce(ctx context.Context, payer, nonce string) (paywall.Payment, error) {
	p, err := scanPayment(db.read.QueryRowContext(ctx,
		`SELECT `+paymentColumns+` FROM payments WHERE payer = ? AND nonce = ?`, payer, nonce))
	if errors.Is(err, sql.ErrNoRows) {
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
		where, args = append(where, "status = ?"), append(args, f.Status)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "created_at >= ?"), append(args, micros(f.Since))
	}
	q := `SELECT ` + paymentColumns + ` FROM payments`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY created_at DESC, payer DESC, nonce DESC`
	if f.Limit > 0 {
		q, args = q+` LIMIT ?`, append(args, f.Limit)
	}
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, db.fail("list payments", err)
	}
	defer rows.Close()
	var ps []paywall.Payment
	for rows.Next() {
		p, err := scanPayment(rows)
		if err != nil {
			return nil, db.fail("list payments", err)
		}
		ps = append(ps, p)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail("list payments", err)
	}
	return ps, nil
}
