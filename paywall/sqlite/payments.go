package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

const paymentColumns = `payer, nonce, amount, resource, network, tx, status, reason, created_at, updated_at`

// scanPayment reads a row of paymentColumns.
func scanPayment(row interface{ Scan(...any) error }) (store.Payment, error) {
	var p store.Payment
	var created, updated sql.NullInt64
	if err := row.Scan(&p.Payer, &p.Nonce, &p.Amount, &p.Resource, &p.Network, &p.Transaction,
		&p.Status, &p.Reason, &created, &updated); err != nil {
		return store.Payment{}, err
	}
	p.CreatedAt, p.UpdatedAt = fromMicros(created), fromMicros(updated)
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
	_, err := db.write.ExecContext(ctx, `INSERT INTO payments (`+paymentColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.Payer, p.Nonce, p.Amount, p.Resource, p.Network, p.Transaction, store.Reserved, p.Reason,
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

// UpdatePayment sets the state, transaction and update time of (payer,
// nonce). NotFound if there is no such payment; Invalid for an
// unknown status or the zero time.
func (db *DB) UpdatePayment(ctx context.Context, payer, nonce string, u store.Update) error {
	if err := u.Check(); err != nil {
		return err
	}
	res, err := db.write.ExecContext(ctx, `UPDATE payments SET status = ?, tx = ?, reason = ?, updated_at = ?
		WHERE payer = ? AND nonce = ?`, u.To.Status, u.Transaction, u.To.Reason, micros(u.At), payer, nonce)
	return db.updatedOne(res, err, "update payment", "payment not found")
}

// TransitionPayment applies t's update to (t.Payer, t.Nonce) if it is in
// state t.From, and reports whether it was.
func (db *DB) TransitionPayment(ctx context.Context, t store.Transition) (bool, error) {
	if err := t.Check(); err != nil {
		return false, err
	}
	res, err := db.write.ExecContext(ctx, `UPDATE payments SET status = ?, tx = ?, reason = ?, updated_at = ?
		WHERE payer = ? AND nonce = ? AND status = ? AND reason = ?`, t.To.Status, t.Transaction, t.To.Reason, micros(t.At), t.Payer, t.Nonce, t.From.Status, t.From.Reason)
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
		payer, nonce, store.Reserved)
	if err != nil {
		return db.fail("release payment", err)
	}
	return nil
}

// PaymentByNonce returns one payment, or NotFound.
func (db *DB) PaymentByNonce(ctx context.Context, payer, nonce string) (store.Payment, error) {
	p, err := scanPayment(db.read.QueryRowContext(ctx,
		`SELECT `+paymentColumns+` FROM payments WHERE payer = ? AND nonce = ?`, payer, nonce))
	if errors.Is(err, sql.ErrNoRows) {
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
	var ps []store.Payment
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
