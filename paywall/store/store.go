// Package store holds what the service keeps across requests and instances
// (API keys, usage, the payments ledger and windowed counters) as plain
// types, and the interfaces its adapters implement: paywall/sqlite for one
// instance, paywall/postgres for many, and paywall/storetest, the one
// conformance suite both pass. It knows no HTTP and no database.
package store

import (
	"context"
	"time"

	"github.com/certbank/certbank"
)

// Store is everything the service keeps across requests and instances: API
// keys, usage state, the payments ledger, what learners leave behind (mock
// exams, anonymous graded answers, question reports) and generic windowed
// counters. It is
// implemented by paywall/sqlite (one instance, embedded) and paywall/postgres
// (many instances sharing one server); paywall/storetest is the conformance
// suite both pass.
//
// Errors: methods return certbank errors of kind NotFound or Conflict where
// documented, Unavailable when the database cannot be reached (the service
// answers 503), and anything else as an internal error.
type Store interface {
	KeyStore
	UsageStore
	PaymentStore
	LearnerStore
	// Hit adds one to the counter called name in the window that starts at
	// window and returns the new count. Counters of windows older than a
	// day may be discarded. Concurrent hits are never lost.
	Hit(ctx context.Context, name string, window time.Time) (int, error)
	// Ping checks that the database answers.
	Ping(ctx context.Context) error
	// Close releases the store's resources.
	Close() error
}

// Key is an API key's record. The key itself is never stored: only Hash, the
// lowercase hex SHA-256 of the key.
type Key struct {
	ID        string // stable identifier, e.g. "key_3f9c2a0e5b7d4c1a"; safe to show and log
	Hash      string
	Prefix    string // the first characters of the key, shown to help support find it
	Name      string
	Email     string // lowercased
	Tier      string // tier name of site.yaml
	TierUntil time.Time
	CreatedAt time.Time
	RevokedAt time.Time // zero while active
}

// Active reports whether the key has not been revoked.
func (k Key) Active() bool { return k.RevokedAt.IsZero() }

// KeyStore keeps API keys.
type KeyStore interface {
	// CreateKey stores a new key. It fails with Conflict when an active key
	// with the same email (case-insensitive) or the same hash exists.
	CreateKey(ctx context.Context, k Key) error
	// KeyByHash returns the key (active or revoked) with the given hash, or
	// NotFound.
	KeyByHash(ctx context.Context, hash string) (Key, error)
	// KeyByID returns the key with the given ID, or NotFound.
	KeyByID(ctx context.Context, id string) (Key, error)
	// Keys returns every key, newest first.
	Keys(ctx context.Context) ([]Key, error)
	// SetTier sets a key's tier and the end of its subscription (zero: no
	// end). NotFound if there is no such key.
	SetTier(ctx context.Context, id, tier string, until time.Time) error
	// RevokeKey marks a key revoked at the given time. NotFound if there is
	// no such key; revoking a revoked key changes nothing.
	RevokeKey(ctx context.Context, id string, at time.Time) error
	// RotateKey replaces an active key's hash and prefix, keeping its ID,
	// tier and usage. NotFound if there is no such active key; Conflict if
	// the new hash is taken.
	RotateKey(ctx context.Context, id, hash, prefix string) error
}

// Usage is the accounting state of one key, as the service reads and
// writes it inside a usage transaction.
type Usage struct {
	KeyID string
	// MinuteStart is the start of the current rate-limit window (a whole
	// UTC minute) and MinuteCount the requests counted in it.
	MinuteStart time.Time
	MinuteCount int
	// Month is the current calendar month, "2006-01" in UTC, with its
	// request and question counts.
	Month          string
	MonthRequests  int
	MonthQuestions int
	// The key's set of questions served is opaque to the store (the
	// service encodes it) and kept in two parts, so that most saves write
	// only a small one: SeenBase, the bulk of a long history, which changes
	// rarely, and Seen, the recent additions, which change with almost
	// every request. SeenCount is the size of the whole set. Load returns
	// both parts with SaveBase false; Save writes SeenBase only when
	// SaveBase is set and keeps the stored one otherwise.
	Seen      []byte
	SeenBase  []byte
	SaveBase  bool
	SeenCount int
}

// UsageTx is a usage transaction: it sees and changes usage atomically,
// and its loads lock the keys they return until the transaction ends, so
// concurrent transactions on the same key (in this process or another
// instance) run one after the other.
type UsageTx interface {
	// Load returns the usage of each key ID for the given month (zero
	// counts for a key with no usage yet; the month counts are those of
	// month, the minute and seen state is the latest), locking them.
	Load(ctx context.Context, keyIDs []string, month string) (map[string]*Usage, error)
	// Save writes usage states loaded in this transaction. The store may
	// keep the byte slices of the usages (Seen, SeenBase) after Save
	// returns: the caller must not change their bytes afterwards (the
	// service never changes a seen set in place).
	Save(ctx context.Context, us []*Usage) error
}

// UsageStore runs usage transactions and answers reports.
type UsageStore interface {
	// UpdateUsage runs fn in one durable transaction: when it returns nil
	// every Save is committed (and survives a crash of the process); when
	// fn or the commit fails nothing is changed.
	UpdateUsage(ctx context.Context, fn func(UsageTx) error) error
	// MonthlyUsage returns a key's request and question counts for a month.
	MonthlyUsage(ctx context.Context, keyID, month string) (requests, questions int, err error)
}

// PaymentStatus is where a payment is in the ledger.
type PaymentStatus string

// Payment statuses in the ledger.
const (
	Reserved PaymentStatus = "reserved" // (payer, nonce) claimed by a request being verified
	Pending  PaymentStatus = "pending"  // broadcast, receipt not seen in time: reconcile
	Settled  PaymentStatus = "settled"  // on chain; the content was sent
	Failed   PaymentStatus = "failed"   // settlement reverted or was refused; nothing sent
)

// Statuses lists every payment status, in the order of their lives.
var Statuses = []PaymentStatus{Reserved, Pending, Settled, Failed}

// Valid reports whether s is one of the ledger's statuses.
func (s PaymentStatus) Valid() bool {
	switch s {
	case Reserved, Pending, Settled, Failed:
		return true
	}
	return false
}

// ParseStatus returns the status named s ("" is any status, for filters).
func ParseStatus(s string) (PaymentStatus, error) {
	if st := PaymentStatus(s); s == "" || st.Valid() {
		return st, nil
	}
	return "", certbank.Errorf(certbank.Invalid, "unknown payment status %q; use reserved, pending, settled or failed", s)
}

// ReasonUndelivered marks a settled payment whose content has not been
// sent yet: its settlement was pending when the payer was answered, and
// was found settled by the background reconciler. The payer's retry with
// the same payment gets the content, once.
const ReasonUndelivered = "undelivered"

// State is a payment's status with the reason that qualifies it (why it
// failed, that it is pending settlement, that it is undelivered).
type State struct {
	Status PaymentStatus
	Reason string
}

// Update is what UpdatePayment makes of a payment: its new state, its
// transaction hash (once known) and the time of the change.
type Update struct {
	To          State
	Transaction string
	At          time.Time
}

// Check returns an Invalid error for an unknown status or a zero time.
func (u Update) Check() error {
	if !u.To.Status.Valid() {
		return certbank.Errorf(certbank.Invalid, "unknown payment status %q", u.To.Status)
	}
	if u.At.IsZero() {
		return certbank.Errorf(certbank.Invalid, "a payment update needs a time")
	}
	return nil
}

// Transition is a conditional Update: payment (Payer, Nonce) changes only
// if it is in state From.
type Transition struct {
	Payer, Nonce string
	From         State
	Update
}

// Check returns an Invalid error for an unknown status or a zero time.
func (t Transition) Check() error {
	if !t.From.Status.Valid() {
		return certbank.Errorf(certbank.Invalid, "unknown payment status %q", t.From.Status)
	}
	return t.Update.Check()
}

// Payment is one row of the payments ledger, keyed by (Payer, Nonce).
type Payment struct {
	Payer       string // lowercase 0x address
	Nonce       string // lowercase 0x 32-byte hex
	Amount      int64  // atomic USDC units
	Resource    string
	Network     string
	Transaction string // transaction hash, once known
	Status      PaymentStatus
	Reason      string // qualifies Status: why it failed, settlement_pending, undelivered
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// PaymentFilter selects payments for listing.
type PaymentFilter struct {
	Status PaymentStatus // "" for any
	Since  time.Time     // zero for all time
	Limit  int           // 0 for no limit
}

// PaymentStore keeps the payments ledger.
type PaymentStore interface {
	// ReservePayment inserts p with status reserved. It fails with Conflict
	// when (payer, nonce) is already in the ledger in any status, so of any
	// number of concurrent reservations of one payment exactly one succeeds.
	ReservePayment(ctx context.Context, p Payment) error
	// UpdatePayment sets the state and transaction of (payer, nonce).
	// NotFound if there is no such payment; Invalid for an unknown status
	// or a zero time.
	UpdatePayment(ctx context.Context, payer, nonce string, u Update) error
	// TransitionPayment is UpdatePayment on a condition: it changes
	// (t.Payer, t.Nonce) only if its state is t.From, and reports whether
	// it did. Of any number of concurrent transitions out of one state, in
	// any instance, exactly one succeeds. It fails with Invalid for an
	// unknown status or a zero time.
	TransitionPayment(ctx context.Context, t Transition) (bool, error)
	// ReleasePayment deletes a reservation that never reached the chain
	// (verification failed), so a corrected retry may use the nonce. It
	// deletes only rows in status reserved.
	ReleasePayment(ctx context.Context, payer, nonce string) error
	// PaymentByNonce returns one payment, or NotFound.
	PaymentByNonce(ctx context.Context, payer, nonce string) (Payment, error)
	// Payments lists payments, newest first.
	Payments(ctx context.Context, f PaymentFilter) ([]Payment, error)
}
