// Package ledger is the pay-per-request payment state machine: reserve
// (payer, nonce), verify, settle, record, and the retries and background
// reconciliation of settlements that were not confirmed in time. It returns
// an Outcome that says what the payer is owed (the content, a refusal, a
// "pending, retry") and leaves the answer to the HTTP door; it knows no
// net/http.
//
// A payment's life in the ledger (store.PaymentStatus with its reason):
//
//	reserved ──verify fails / nothing broadcast──▶ (row deleted)
//	reserved ──settled──▶ settled
//	reserved ──reverted──▶ failed
//	reserved ──receipt late──▶ pending (settlement_pending)
//	pending ──payer's retry finds it settled──▶ settled (delivered to that one retry)
//	pending ──reconciler finds it settled──▶ settled (undelivered)
//	settled (undelivered) ──payer's retry──▶ settled (delivered to that one retry)
//	pending ──reconciler finds it reverted──▶ failed (transaction_failed)
package ledger

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
	"github.com/certbank/certbank/paywall/x402"
)

// Verdict is what a payment attempt earned.
type Verdict int

// Verdicts.
const (
	// Deliver: the payment settled; send the content with the settlement.
	Deliver Verdict = iota + 1
	// Refuse: a 402; Err says why (an x402 reason), Settlement is set when
	// settlement was attempted.
	Refuse
	// Pending: the transfer was sent but not confirmed in time; the payer
	// retries with the same payment. Settlement is set.
	Pending
	// Fail: nothing was charged and nothing is owed; Err is Unavailable
	// (retry) or a store error.
	Fail
)

func (v Verdict) String() string {
	switch v {
	case Deliver:
		return "deliver"
	case Refuse:
		return "refuse"
	case Pending:
		return "pending"
	case Fail:
		return "fail"
	}
	return "unknown"
}

// Outcome is the result of one payment attempt.
type Outcome struct {
	Verdict    Verdict
	Settlement *x402.Settlement
	Err        error
}

// Config is what the ledger needs.
type Config struct {
	Store store.PaymentStore
	// Facilitator verifies and settles payments.
	Facilitator x402.Facilitator
	// Reconciler resolves settlements that were broadcast but not
	// confirmed in time; nil when the facilitator cannot (the payment then
	// stays pending for the operator, and a retry is a replay).
	Reconciler    x402.Reconciler
	SettleTimeout time.Duration // default 30 s
	Now           func() time.Time
	Logger        *slog.Logger
}

// Ledger runs payments through the state machine.
type Ledger struct {
	cfg Config
}

// New checks cfg and returns a ledger.
func New(cfg Config) (*Ledger, error) {
	if cfg.Store == nil || cfg.Facilitator == nil {
		return nil, errors.New("ledger: Config needs a Store and a Facilitator")
	}
	if cfg.SettleTimeout == 0 {
		cfg.SettleTimeout = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Ledger{cfg: cfg}, nil
}

// Key returns the ledger key of a payment: its payer and nonce, lowercase.
func Key(pay *x402.Payment) (payer, nonce string) {
	return strings.ToLower(pay.Authorization.From), strings.ToLower(pay.Authorization.Nonce)
}

func refuse(err error, st *x402.Settlement) Outcome {
	return Outcome{Verdict: Refuse, Err: err, Settlement: st}
}

// Accept runs a payment that matches req: reserve (payer, nonce) so that of
// any number of concurrent requests carrying it exactly one goes on, verify,
// settle, record. A payment already in the ledger is a retry (see retry).
func (l *Ledger) Accept(ctx context.Context, pay *x402.Payment, req x402.Requirement) Outcome {
	payer, nonce := Key(pay)
	now := l.cfg.Now().UTC()
	rec := store.Payment{Payer: payer, Nonce: nonce, Amount: int64(req.Amount), Resource: req.Resource, Network: req.Network, Status: store.Reserved, CreatedAt: now, UpdatedAt: now}
	if err := l.cfg.Store.ReservePayment(ctx, rec); err != nil {
		if certbank.ErrorCode(err) != certbank.Conflict {
			return Outcome{Verdict: Fail, Err: err}
		}
		return l.retry(ctx, pay, req)
	}
	if _, err := l.cfg.Facilitator.Verify(ctx, pay, req); err != nil {
		// Nothing reached the chain: free the nonce for a corrected retry.
		if rerr := l.cfg.Store.ReleasePayment(context.WithoutCancel(ctx), payer, nonce); rerr != nil {
			l.cfg.Logger.Error("release payment reservation", "payer", payer, "err", rerr)
		}
		return refuse(err, nil)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.cfg.SettleTimeout)
	defer cancel()
	st, err := l.cfg.Facilitator.Settle(sctx, pay, req)
	return l.finish(ctx, pay, st, err, false)
}

// finish records the outcome of a settlement attempt. retried says that
// the request is a retry of a payment that was pending: it may run beside
// other retries of the same payment (or the background reconciler), so the
// content goes only to the one that moves the ledger row out of pending
// (or out of settled-but-undelivered).
func (l *Ledger) finish(ctx context.Context, pay *x402.Payment, st x402.Settlement, err error, retried bool) Outcome {
	ctx = context.WithoutCancel(ctx)
	payer, nonce := Key(pay)
	now := l.cfg.Now().UTC()
	settled := store.Update{To: store.State{Status: store.Settled}, Transaction: st.Transaction, At: now}
	switch {
	case err == nil && !st.Pending && retried:
		won, cerr := l.cfg.Store.TransitionPayment(ctx, store.Transition{Payer: payer, Nonce: nonce,
			From: store.State{Status: store.Pending, Reason: x402.ReasonSettlementPending}, Update: settled})
		if cerr == nil && !won {
			won, cerr = l.cfg.Store.TransitionPayment(ctx, store.Transition{Payer: payer, Nonce: nonce,
				From: store.State{Status: store.Settled, Reason: store.ReasonUndelivered}, Update: settled})
		}
		if cerr != nil {
			return Outcome{Verdict: Fail, Err: cerr} // nothing delivered, nothing claimed: the same retry can come again
		}
		if !won {
			return replayed()
		}
		return Outcome{Verdict: Deliver, Settlement: &st}
	case err == nil && !st.Pending:
		if uerr := l.cfg.Store.UpdatePayment(ctx, payer, nonce, settled); uerr != nil {
			// The money moved: deliver anyway, and say so in the log.
			l.cfg.Logger.Error("record settled payment", "payer", payer, "tx", st.Transaction, "err", uerr)
		}
		return Outcome{Verdict: Deliver, Settlement: &st}
	case st.Pending || x402.ReasonOf(err) == x402.ReasonSettlementPending:
		u := store.Update{To: store.State{Status: store.Pending, Reason: x402.ReasonSettlementPending}, Transaction: st.Transaction, At: now}
		if uerr := l.cfg.Store.UpdatePayment(ctx, payer, nonce, u); uerr != nil {
			l.cfg.Logger.Error("record pending payment", "payer", payer, "err", uerr)
		}
		return Outcome{Verdict: Pending, Settlement: &st,
			Err: certbank.Errorf(certbank.Unavailable, "settlement_pending: transaction %s was sent but is not confirmed yet; retry this request with the SAME payment header (do not sign a new one): it will be reconciled and you will not be charged twice", st.Transaction)}
	case certbank.ErrorCode(err) == certbank.Unavailable:
		// nothing was broadcast: free the nonce
		if rerr := l.cfg.Store.ReleasePayment(ctx, payer, nonce); rerr != nil {
			l.cfg.Logger.Error("release payment reservation", "payer", payer, "err", rerr)
		}
		return Outcome{Verdict: Fail, Err: err}
	default:
		u := store.Update{To: store.State{Status: store.Failed, Reason: x402.ReasonOf(err)}, Transaction: st.Transaction, At: now}
		if uerr := l.cfg.Store.UpdatePayment(ctx, payer, nonce, u); uerr != nil {
			l.cfg.Logger.Error("record failed payment", "payer", payer, "err", uerr)
		}
		return refuse(err, &st)
	}
}

// replayed refuses a payment that has been used.
func replayed() Outcome {
	return refuse(&x402.Error{Reason: x402.ReasonNonceUsed, Message: "this payment authorization was already used or is being processed; sign a new payment with a fresh nonce"}, nil)
}

// retry handles a payment whose (payer, nonce) is already in the ledger,
// for the same resource and amount and signed by its payer: a pending one
// is reconciled and, if it settled, delivered without a second charge; a
// settled one that the background reconciler found settled before the
// payer came back (ReasonUndelivered) is delivered. Each is delivered
// once, to one request. Anything else is a replay.
func (l *Ledger) retry(ctx context.Context, pay *x402.Payment, req x402.Requirement) Outcome {
	payer, nonce := Key(pay)
	rec, err := l.cfg.Store.PaymentByNonce(ctx, payer, nonce)
	if err != nil && certbank.ErrorCode(err) != certbank.NotFound {
		return Outcome{Verdict: Fail, Err: err}
	}
	if err != nil || l.cfg.Reconciler == nil || rec.Resource != req.Resource || rec.Amount != int64(req.Amount) {
		return replayed()
	}
	if _, verr := x402.VerifyOffline(pay, req, l.cfg.Now()); verr != nil && x402.ReasonOf(verr) != x402.ReasonValidBefore {
		return replayed() // only the payer's own signed payment claims it
	}
	switch {
	case rec.Status == store.Pending:
		st, rerr := l.cfg.Reconciler.Reconcile(ctx, payer, nonce)
		if rerr == nil && st.Transaction == "" {
			st.Transaction = rec.Transaction
		}
		return l.finish(ctx, pay, st, rerr, true)
	case rec.Status == store.Settled && rec.Reason == store.ReasonUndelivered:
		st := x402.Settlement{Transaction: rec.Transaction, Network: rec.Network, Payer: payer}
		return l.finish(ctx, pay, st, nil, true)
	}
	return replayed()
}

// ReconcilePending asks the chain about every pending payment and records
// what became of it: settled ones wait, undelivered, for their payer's
// retry; reverted ones fail.
func (l *Ledger) ReconcilePending(ctx context.Context) {
	if l.cfg.Reconciler == nil {
		return
	}
	ps, err := l.cfg.Store.Payments(ctx, store.PaymentFilter{Status: store.Pending, Limit: 100})
	if err != nil {
		l.cfg.Logger.Warn("list pending payments", "err", err)
		return
	}
	for _, p := range ps {
		st, err := l.cfg.Reconciler.Reconcile(ctx, p.Payer, p.Nonce)
		from := store.State{Status: store.Pending, Reason: p.Reason}
		switch {
		case err == nil && !st.Pending:
			tx := st.Transaction
			if tx == "" {
				tx = p.Transaction
			}
			// Settled, but the payer has not had the content: the
			// payer's retry gets it (see retry), unless a retry running
			// now has already moved the row.
			if _, err := l.cfg.Store.TransitionPayment(ctx, store.Transition{Payer: p.Payer, Nonce: p.Nonce, From: from,
				Update: store.Update{To: store.State{Status: store.Settled, Reason: store.ReasonUndelivered}, Transaction: tx, At: l.cfg.Now().UTC()}}); err != nil {
				l.cfg.Logger.Warn("record reconciled payment", "payer", p.Payer, "tx", tx, "err", err)
				continue
			}
			l.cfg.Logger.Info("pending payment settled; its content waits for the payer's retry", "payer", p.Payer, "tx", tx)
		case x402.ReasonOf(err) == x402.ReasonTransactionFailed:
			if _, err := l.cfg.Store.TransitionPayment(ctx, store.Transition{Payer: p.Payer, Nonce: p.Nonce, From: from,
				Update: store.Update{To: store.State{Status: store.Failed, Reason: x402.ReasonTransactionFailed}, Transaction: p.Transaction, At: l.cfg.Now().UTC()}}); err != nil {
				l.cfg.Logger.Warn("record reconciled payment", "payer", p.Payer, "err", err)
			}
		}
	}
}

// Run reconciles pending payments every interval until ctx ends.
func (l *Ledger) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.ReconcilePending(ctx)
		}
	}
}
