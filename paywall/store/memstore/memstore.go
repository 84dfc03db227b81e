// Package memstore is an in-memory store.Store for unit tests: it keeps
// every promise of the store contract (it passes paywall/storetest) in one
// process, and Faulty wraps any store to inject errors. It is not for
// serving: nothing survives the process.
package memstore

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

type monthKey struct{ id, month string }

type usage struct {
	minuteStart time.Time
	minuteCount int
	seen, base  []byte
	seenCount   int
}

type payKey struct{ payer, nonce string }

type hitKey struct {
	name   string
	window int64
}

// Store is an in-memory store.Store. The zero value is not usable: call New.
type Store struct {
	mu       sync.Mutex // guards everything below
	txMu     sync.Mutex // one usage transaction at a time
	closed   bool
	keys     map[string]store.Key
	usage    map[string]usage
	months   map[monthKey][2]int // requests, questions
	payments map[payKey]store.Payment
	hits     map[hitKey]int
	exams    map[string]store.Exam
	resps    []store.Response
	reports  map[string]store.Report
}

// New returns an empty store.
func New() *Store {
	return &Store{keys: map[string]store.Key{}, usage: map[string]usage{}, months: map[monthKey][2]int{},
		payments: map[payKey]store.Payment{}, hits: map[hitKey]int{},
		exams: map[string]store.Exam{}, reports: map[string]store.Report{}}
}

var _ store.Store = (*Store)(nil)

func errClosed() error { return certbank.Errorf(certbank.Unavailable, "memstore: closed") }

// lock locks the store, or fails with Unavailable once it is closed.
func (s *Store) lock() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errClosed()
	}
	return nil
}

func micro(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(time.Microsecond)
}

func normKey(k store.Key) store.Key {
	k.TierUntil, k.CreatedAt, k.RevokedAt = micro(k.TierUntil), micro(k.CreatedAt), micro(k.RevokedAt)
	return k
}

// CreateKey stores a new key.
func (s *Store) CreateKey(ctx context.Context, k store.Key) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if k.ID == "" || k.Hash == "" || k.CreatedAt.IsZero() {
		return certbank.Errorf(certbank.Invalid, "a key needs an id, a hash and a creation time")
	}
	k.Email = strings.ToLower(k.Email)
	for _, o := range s.keys {
		if o.ID == k.ID || o.Hash == k.Hash || (o.Active() && k.Email != "" && o.Email == k.Email) {
			return certbank.Errorf(certbank.Conflict, "a key with this id, hash or email exists")
		}
	}
	s.keys[k.ID] = normKey(k)
	return nil
}

// KeyByHash returns the key with the given hash.
func (s *Store) KeyByHash(ctx context.Context, hash string) (store.Key, error) {
	if err := s.lock(); err != nil {
		return store.Key{}, err
	}
	defer s.mu.Unlock()
	for _, k := range s.keys {
		if k.Hash == hash && hash != "" {
			return k, nil
		}
	}
	return store.Key{}, certbank.Errorf(certbank.NotFound, "key not found")
}

// KeyByID returns the key with the given id.
func (s *Store) KeyByID(ctx context.Context, id string) (store.Key, error) {
	if err := s.lock(); err != nil {
		return store.Key{}, err
	}
	defer s.mu.Unlock()
	if k, ok := s.keys[id]; ok {
		return k, nil
	}
	return store.Key{}, certbank.Errorf(certbank.NotFound, "key not found")
}

// Keys returns every key, newest first.
func (s *Store) Keys(ctx context.Context) ([]store.Key, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := make([]store.Key, 0, len(s.keys))
	for _, k := range s.keys {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b store.Key) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return out, nil
}

func (s *Store) changeKey(id string, activeOnly bool, fn func(*store.Key) error) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	k, ok := s.keys[id]
	if !ok || (activeOnly && !k.Active()) {
		return certbank.Errorf(certbank.NotFound, "key not found")
	}
	if err := fn(&k); err != nil {
		return err
	}
	s.keys[id] = normKey(k)
	return nil
}

// SetTier sets a key's tier and subscription end.
func (s *Store) SetTier(ctx context.Context, id, tier string, until time.Time) error {
	return s.changeKey(id, false, func(k *store.Key) error { k.Tier, k.TierUntil = tier, until; return nil })
}

// RevokeKey revokes a key (once).
func (s *Store) RevokeKey(ctx context.Context, id string, at time.Time) error {
	return s.changeKey(id, false, func(k *store.Key) error {
		if k.Active() {
			k.RevokedAt = at
		}
		return nil
	})
}

// RotateKey replaces an active key's hash and prefix.
func (s *Store) RotateKey(ctx context.Context, id, hash, prefix string) error {
	return s.changeKey(id, true, func(k *store.Key) error {
		for _, o := range s.keys {
			if o.Hash == hash && o.ID != id {
				return certbank.Errorf(certbank.Conflict, "the new hash is taken")
			}
		}
		k.Hash, k.Prefix = hash, prefix
		return nil
	})
}

func checkMonth(month string) error {
	if _, err := time.Parse("2006-01", month); err != nil || len(month) != 7 {
		return certbank.Errorf(certbank.Invalid, "month %q is not YYYY-MM", month)
	}
	return nil
}

// tx is a usage transaction: loads read the store, saves are staged and
// applied when the function returns nil.
type tx struct {
	s      *Store
	loaded map[string]bool
	staged []store.Usage
}

func (t *tx) Load(ctx context.Context, ids []string, month string) (map[string]*store.Usage, error) {
	if err := checkMonth(month); err != nil {
		return nil, err
	}
	if err := t.s.lock(); err != nil {
		return nil, err
	}
	defer t.s.mu.Unlock()
	out := make(map[string]*store.Usage, len(ids))
	for _, id := range ids {
		u := t.s.usage[id]
		m := t.s.months[monthKey{id, month}]
		out[id] = &store.Usage{KeyID: id, MinuteStart: u.minuteStart, MinuteCount: u.minuteCount, Month: month,
			MonthRequests: m[0], MonthQuestions: m[1], Seen: u.seen, SeenBase: u.base, SeenCount: u.seenCount}
		t.loaded[id] = true
	}
	return out, nil
}

func (t *tx) Save(ctx context.Context, us []*store.Usage) error {
	for _, u := range us {
		if !t.loaded[u.KeyID] {
			return certbank.Errorf(certbank.Invalid, "usage of %s was not loaded in this transaction", u.KeyID)
		}
		if err := checkMonth(u.Month); err != nil {
			return err
		}
		t.staged = append(t.staged, *u)
	}
	return nil
}

// UpdateUsage runs fn in one transaction; transactions run one at a time.
func (s *Store) UpdateUsage(ctx context.Context, fn func(store.UsageTx) error) error {
	s.txMu.Lock()
	defer s.txMu.Unlock()
	t := &tx{s: s, loaded: map[string]bool{}}
	if err := fn(t); err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	for _, u := range t.staged {
		old := s.usage[u.KeyID]
		base := old.base
		if u.SaveBase {
			base = u.SeenBase
		}
		s.usage[u.KeyID] = usage{minuteStart: micro(u.MinuteStart), minuteCount: u.MinuteCount, seen: u.Seen, base: base, seenCount: u.SeenCount}
		s.months[monthKey{u.KeyID, u.Month}] = [2]int{u.MonthRequests, u.MonthQuestions}
	}
	return nil
}

// MonthlyUsage returns a key's counts for a month.
func (s *Store) MonthlyUsage(ctx context.Context, keyID, month string) (int, int, error) {
	if err := checkMonth(month); err != nil {
		return 0, 0, err
	}
	if err := s.lock(); err != nil {
		return 0, 0, err
	}
	defer s.mu.Unlock()
	m := s.months[monthKey{keyID, month}]
	return m[0], m[1], nil
}

// ReservePayment inserts p as reserved.
func (s *Store) ReservePayment(ctx context.Context, p store.Payment) error {
	if p.Payer == "" || p.Nonce == "" || p.CreatedAt.IsZero() {
		return certbank.Errorf(certbank.Invalid, "a payment needs a payer, a nonce and a creation time")
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	k := payKey{p.Payer, p.Nonce}
	if _, ok := s.payments[k]; ok {
		return certbank.Errorf(certbank.Conflict, "this payment authorization has already been used")
	}
	if p.UpdatedAt.IsZero() {
		p.UpdatedAt = p.CreatedAt
	}
	p.Status, p.CreatedAt, p.UpdatedAt = store.Reserved, micro(p.CreatedAt), micro(p.UpdatedAt)
	s.payments[k] = p
	return nil
}

func (s *Store) apply(k payKey, u store.Update) {
	p := s.payments[k]
	p.Status, p.Reason, p.Transaction, p.UpdatedAt = u.To.Status, u.To.Reason, u.Transaction, micro(u.At)
	s.payments[k] = p
}

// UpdatePayment sets a payment's state.
func (s *Store) UpdatePayment(ctx context.Context, payer, nonce string, u store.Update) error {
	if err := u.Check(); err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	k := payKey{payer, nonce}
	if _, ok := s.payments[k]; !ok {
		return certbank.Errorf(certbank.NotFound, "payment not found")
	}
	s.apply(k, u)
	return nil
}

// TransitionPayment applies t if the payment is in state t.From.
func (s *Store) TransitionPayment(ctx context.Context, t store.Transition) (bool, error) {
	if err := t.Check(); err != nil {
		return false, err
	}
	if err := s.lock(); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	k := payKey{t.Payer, t.Nonce}
	p, ok := s.payments[k]
	if !ok || p.Status != t.From.Status || p.Reason != t.From.Reason {
		return false, nil
	}
	s.apply(k, t.Update)
	return true, nil
}

// ReleasePayment deletes a reservation still in status reserved.
func (s *Store) ReleasePayment(ctx context.Context, payer, nonce string) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	k := payKey{payer, nonce}
	if p, ok := s.payments[k]; ok && p.Status == store.Reserved {
		delete(s.payments, k)
	}
	return nil
}

// PaymentByNonce returns one payment.
func (s *Store) PaymentByNonce(ctx context.Context, payer, nonce string) (store.Payment, error) {
	if err := s.lock(); err != nil {
		return store.Payment{}, err
	}
	defer s.mu.Unlock()
	if p, ok := s.payments[payKey{payer, nonce}]; ok {
		return p, nil
	}
	return store.Payment{}, certbank.Errorf(certbank.NotFound, "payment not found")
}

// Payments lists payments, newest first.
func (s *Store) Payments(ctx context.Context, f store.PaymentFilter) ([]store.Payment, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []store.Payment
	for _, p := range s.payments {
		if (f.Status == "" || p.Status == f.Status) && (f.Since.IsZero() || !p.CreatedAt.Before(micro(f.Since))) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b store.Payment) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		if c := strings.Compare(b.Payer, a.Payer); c != 0 {
			return c
		}
		return strings.Compare(b.Nonce, a.Nonce)
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// Hit counts one hit of name in window.
func (s *Store) Hit(ctx context.Context, name string, window time.Time) (int, error) {
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	k := hitKey{name, window.UnixMicro()}
	s.hits[k]++
	return s.hits[k], nil
}

// Ping fails once the store is closed.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.lock(); err != nil {
		return err
	}
	s.mu.Unlock()
	return nil
}

// Close closes the store; it may be called more than once.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}
