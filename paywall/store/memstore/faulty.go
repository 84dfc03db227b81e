package memstore

import (
	"context"
	"sync"
	"time"

	"github.com/certbank/certbank/paywall/store"
)

// Faulty wraps a store to inject faults: a hook set with On runs before
// the named method, and an error it returns is the method's error (the
// wrapped store is not called). Hooks may also block, to hold a call.
type Faulty struct {
	store.Store
	mu    sync.Mutex
	hooks map[string]func() error
}

// NewFaulty wraps s.
func NewFaulty(s store.Store) *Faulty { return &Faulty{Store: s, hooks: map[string]func() error{}} }

// On sets the hook of method (e.g. "UpdateUsage"); nil removes it.
func (f *Faulty) On(method string, hook func() error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hooks[method] = hook
}

func (f *Faulty) hook(method string) error {
	f.mu.Lock()
	h := f.hooks[method]
	f.mu.Unlock()
	if h == nil {
		return nil
	}
	return h()
}

// UpdateUsage runs the "UpdateUsage" hook, then the store's; the
// "UpdateUsage.commit" hook runs after fn, inside the transaction, so its
// error fails the transaction as a failed commit would (nothing is saved).
func (f *Faulty) UpdateUsage(ctx context.Context, fn func(store.UsageTx) error) error {
	if err := f.hook("UpdateUsage"); err != nil {
		return err
	}
	return f.Store.UpdateUsage(ctx, func(tx store.UsageTx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return f.hook("UpdateUsage.commit")
	})
}

// KeyByHash runs the "KeyByHash" hook, then the store's.
func (f *Faulty) KeyByHash(ctx context.Context, hash string) (store.Key, error) {
	if err := f.hook("KeyByHash"); err != nil {
		return store.Key{}, err
	}
	return f.Store.KeyByHash(ctx, hash)
}

// ReservePayment runs the "ReservePayment" hook, then the store's.
func (f *Faulty) ReservePayment(ctx context.Context, p store.Payment) error {
	if err := f.hook("ReservePayment"); err != nil {
		return err
	}
	return f.Store.ReservePayment(ctx, p)
}

// UpdatePayment runs the "UpdatePayment" hook, then the store's.
func (f *Faulty) UpdatePayment(ctx context.Context, payer, nonce string, u store.Update) error {
	if err := f.hook("UpdatePayment"); err != nil {
		return err
	}
	return f.Store.UpdatePayment(ctx, payer, nonce, u)
}

// TransitionPayment runs the "TransitionPayment" hook, then the store's.
func (f *Faulty) TransitionPayment(ctx context.Context, t store.Transition) (bool, error) {
	if err := f.hook("TransitionPayment"); err != nil {
		return false, err
	}
	return f.Store.TransitionPayment(ctx, t)
}

// PaymentByNonce runs the "PaymentByNonce" hook, then the store's.
func (f *Faulty) PaymentByNonce(ctx context.Context, payer, nonce string) (store.Payment, error) {
	if err := f.hook("PaymentByNonce"); err != nil {
		return store.Payment{}, err
	}
	return f.Store.PaymentByNonce(ctx, payer, nonce)
}

// Hit runs the "Hit" hook, then the store's.
func (f *Faulty) Hit(ctx context.Context, name string, window time.Time) (int, error) {
	if err := f.hook("Hit"); err != nil {
		return 0, err
	}
	return f.Store.Hit(ctx, name, window)
}

// Ping runs the "Ping" hook, then the store's.
func (f *Faulty) Ping(ctx context.Context) error {
	if err := f.hook("Ping"); err != nil {
		return err
	}
	return f.Store.Ping(ctx)
}
