package paywall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/bank"
	"github.com/certbank/certbank/paywall/store"
	"github.com/certbank/certbank/paywall/x402"
)

// PayConfig configures the pay-per-request route.
type PayConfig struct {
	// Facilitator verifies and settles payments: x402.Local over the
	// development chain or a JSON-RPC endpoint, or an x402.FacilitatorClient.
	Facilitator x402.Facilitator
	// Reconciler resolves settlements that were broadcast but not
	// confirmed in time; nil when the facilitator cannot (the payment then
	// stays pending for the operator).
	Reconciler x402.Reconciler
	// SettleTimeout bounds one settlement (default 30 s).
	SettleTimeout time.Duration
	// ReconcileEvery is how often pending payments are reconciled in the
	// background (default 30 s; negative disables).
	ReconcileEvery time.Duration
}

type payRoute struct {
	s    *Server
	cfg  PayConfig
	stop chan struct{}
	done chan struct{}
}

func newPayRoute(s *Server, c PayConfig) (*payRoute, error) {
	if c.Facilitator == nil {
		return nil, errors.New("paywall: PayConfig needs a Facilitator")
	}
	site := s.cfg.Bank.Site
	if _, ok := x402.LookupNetwork(site.Payment.Network); !ok {
		return nil, fmt.Errorf("paywall: payment network %q is not supported", site.Payment.Network)
	}
	if c.SettleTimeout == 0 {
		c.SettleTimeout = 30 * time.Second
	}
	if c.ReconcileEvery == 0 {
		c.ReconcileEvery = 30 * time.Second
	}
	p := &payRoute{s: s, cfg: c, stop: make(chan struct{}), done: make(chan struct{})}
	if c.Reconciler != nil && c.ReconcileEvery > 0 {
		go p.reconcileLoop()
	} else {
		close(p.done)
	}
	return p, nil
}

func (p *payRoute) close() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
}

type paidMeta struct {
	Certification   string  `json:"certification"`
	Limit           int     `json:"limit"`
	Difficulty      *string `json:"difficulty"`
	IncludeAnswer   bool    `json:"include_answer"`
	PaymentVerified bool    `json:"payment_verified"`
	PricePaidUSDC   string  `json:"price_paid_usdc"`
}

// paymentRefused is a 402 after a payment was presented: the v1 body with
// the reason, the v2 header, and the settlement response header when
// settlement was attempted.
type paymentRefused struct {
	err        error
	req        x402.Requirement
	settlement *x402.Settlement
	version    int
}

func (e *paymentRefused) Error() string { return e.err.Error() }
func (e *paymentRefused) Unwrap() error { return e.err }

// handleX402 serves GET /api/v1/x402: validate parameters (400) → price →
// without payment 402 → decode and match → reserve (payer, nonce) → verify →
// build the response in a buffer → settle → record → 200. Content is sent
// only after the transfer is on chain.
func (s *Server) handleX402(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Cache-Control", "no-store")
	p, err := newParams(r, "certification", "limit", "difficulty", "include_answer")
	if err != nil {
		return err
	}
	f, cert, err := s.draw.Filter(p.str("certification"), p.str("difficulty"), "", true)
	if err != nil {
		return err
	}
	diff := f.Difficulty
	site := s.cfg.Bank.Site
	limits := site.Pricing.Limits()
	if !p.has("limit") {
		return certbank.Errorf(certbank.Invalid, "limit is required: one of %s", joinInts(limits))
	}
	limit, err := strconv.Atoi(p.str("limit"))
	if err != nil || strconv.Itoa(limit) != p.str("limit") || !slices.Contains(limits, limit) {
		return certbank.Errorf(certbank.Invalid, "limit must be one of %s, not %q", joinInts(limits), p.str("limit"))
	}
	include, err := p.boolean("include_answer", false)
	if err != nil {
		return err
	}
	// The rule the catalog, /.well-known/x402.json and the OpenAPI
	// description advertise their offers by: a 402 only for what can be
	// filled.
	if err := site.Pricing.CheckOffer(cert.Slug, s.ix.Stock(cert.Slug), limit, diff); err != nil {
		return err
	}
	cands := s.ix.Matching(bank.Filter{Cert: cert.Slug, Difficulty: diff}, nil)
	if s.pay == nil {
		return certbank.Errorf(certbank.Unavailable, "pay-per-request is not configured on this server")
	}
	price, err := site.Pricing.Price(limit, include)
	if err != nil {
		return err
	}
	req := x402.Requirement{
		Network:           site.Payment.Network,
		PayTo:             site.Payment.PayTo,
		Amount:            price,
		Resource:          site.BaseURL + r.URL.Path + "?" + r.URL.RawQuery,
		Description:       fmt.Sprintf("%d %s practice questions%s", limit, cert.Name, map[bool]string{true: " with answers", false: " (quiz mode)"}[include]),
		MimeType:          "application/json",
		MaxTimeoutSeconds: site.Payment.MaxTimeoutSeconds,
	}
	v1, v2 := r.Header.Get(x402.HeaderPayment), r.Header.Get(x402.HeaderPaymentSignature)
	if v1 == "" && v2 == "" {
		return &paymentRefused{err: certbank.Errorf(certbank.PaymentRequired, "X-PAYMENT header is required"), req: req}
	}
	header, value, version := x402.HeaderPayment, v1, 1
	if v2 != "" {
		header, value, version = x402.HeaderPaymentSignature, v2, 2
	}
	pay, err := x402.Decode(header, value)
	if err != nil {
		return &paymentRefused{err: err, req: req, version: version}
	}
	if err := x402.Match(pay, req); err != nil {
		return &paymentRefused{err: err, req: req, version: version}
	}
	body := paidBody(cert, limit, diff, include, price, cands)
	return s.pay.accept(w, r, pay, req, body)
}

func paidBody(cert *certbank.Certification, limit int, diff certbank.Difficulty, include bool, price certbank.USDC, cands []*bank.Entry) []byte {
	var d *string
	if diff != "" {
		v := string(diff)
		d = &v
	}
	var buf bytes.Buffer
	buf.WriteString(`{"meta":`)
	mb, _ := json.Marshal(paidMeta{Certification: cert.Slug, Limit: limit, Difficulty: d, IncludeAnswer: include, PaymentVerified: true, PricePaidUSDC: price.String()})
	buf.Write(mb)
	buf.WriteString(`,"questions":[`)
	for i, e := range bank.Choose(cands, limit, nil) {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(e.AppendPaid(nil, include))
	}
	buf.WriteString("]}\n")
	return buf.Bytes()
}

func (pr *payRoute) ledgerKey(pay *x402.Payment) (payer, nonce string) {
	return strings.ToLower(pay.Authorization.From), strings.ToLower(pay.Authorization.Nonce)
}

// accept reserves, verifies and settles pay, then sends body.
func (pr *payRoute) accept(w http.ResponseWriter, r *http.Request, pay *x402.Payment, req x402.Requirement, body []byte) error {
	s := pr.s
	ctx := r.Context()
	payer, nonce := pr.ledgerKey(pay)
	now := s.now().UTC()
	rec := store.Payment{Payer: payer, Nonce: nonce, Amount: int64(req.Amount), Resource: req.Resource, Network: req.Network, Status: store.Reserved, CreatedAt: now, UpdatedAt: now}
	if err := s.store.ReservePayment(ctx, rec); err != nil {
		if certbank.ErrorCode(err) != certbank.Conflict {
			return err
		}
		return pr.retry(w, r, pay, req, body)
	}
	if _, err := s.pay.cfg.Facilitator.Verify(ctx, pay, req); err != nil {
		// Nothing reached the chain: free the nonce for a corrected retry.
		if rerr := s.store.ReleasePayment(context.WithoutCancel(ctx), payer, nonce); rerr != nil {
			s.log.Error("release payment reservation", "id", requestID(ctx), "err", rerr)
		}
		s.metrics.payment("refused")
		return &paymentRefused{err: err, req: req, version: pay.Version}
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pr.cfg.SettleTimeout)
	defer cancel()
	st, err := pr.cfg.Facilitator.Settle(sctx, pay, req)
	return pr.finish(w, r, pay, req, body, st, err, false)
}

// finish records the outcome of a settlement attempt and answers. retried
// says that the request is a retry of a payment that was pending: it may
// run beside other retries of the same payment (or the background
// reconciler), so the content goes only to the one that moves the ledger
// row out of pending (or out of settled-but-undelivered).
func (pr *payRoute) finish(w http.ResponseWriter, r *http.Request, pay *x402.Payment, req x402.Requirement, body []byte, st x402.Settlement, err error, retried bool) error {
	s := pr.s
	ctx := context.WithoutCancel(r.Context())
	payer, nonce := pr.ledgerKey(pay)
	now := s.now().UTC()
	switch {
	case err == nil && !st.Pending && retried:
		won, cerr := s.store.TransitionPayment(ctx, store.Transition{Payer: payer, Nonce: nonce, From: store.State{Status: store.Pending, Reason: x402.ReasonSettlementPending}, Update: store.Update{To: store.State{Status: store.Settled, Reason: ""}, Transaction: st.Transaction, At: now}})
		if cerr == nil && !won {
			won, cerr = s.store.TransitionPayment(ctx, store.Transition{Payer: payer, Nonce: nonce, From: store.State{Status: store.Settled, Reason: store.ReasonUndelivered}, Update: store.Update{To: store.State{Status: store.Settled, Reason: ""}, Transaction: st.Transaction, At: now}})
		}
		if cerr != nil {
			return cerr // nothing delivered, nothing claimed: the same retry can come again
		}
		if !won {
			return pr.replayed(pay, req)
		}
		return pr.deliver(w, r, pay, req, st, body)
	case err == nil && !st.Pending:
		if uerr := s.store.UpdatePayment(ctx, payer, nonce, store.Update{To: store.State{Status: store.Settled, Reason: ""}, Transaction: st.Transaction, At: now}); uerr != nil {
			// The money moved: deliver anyway, and say so in the log.
			s.log.Error("record settled payment", "id", requestID(ctx), "tx", st.Transaction, "err", uerr)
		}
		return pr.deliver(w, r, pay, req, st, body)
	case st.Pending || x402.ReasonOf(err) == x402.ReasonSettlementPending:
		if uerr := s.store.UpdatePayment(ctx, payer, nonce, store.Update{To: store.State{Status: store.Pending, Reason: x402.ReasonSettlementPending}, Transaction: st.Transaction, At: now}); uerr != nil {
			s.log.Error("record pending payment", "id", requestID(ctx), "err", uerr)
		}
		s.metrics.payment("pending")
		name, value := x402.SettlementHeader(pay.Version, st, x402.ReasonSettlementPending)
		w.Header().Set(name, value)
		return certbank.Errorf(certbank.Unavailable, "settlement_pending: transaction %s was sent but is not confirmed yet; retry this request with the SAME payment header (do not sign a new one): it will be reconciled and you will not be charged twice", st.Transaction)
	default:
		status := store.Failed
		if certbank.ErrorCode(err) == certbank.Unavailable {
			// nothing was broadcast: free the nonce
			if rerr := s.store.ReleasePayment(ctx, payer, nonce); rerr != nil {
				s.log.Error("release payment reservation", "id", requestID(ctx), "err", rerr)
			}
			s.metrics.payment("refused")
			return err
		}
		if uerr := s.store.UpdatePayment(ctx, payer, nonce, store.Update{To: store.State{Status: status, Reason: x402.ReasonOf(err)}, Transaction: st.Transaction, At: now}); uerr != nil {
			s.log.Error("record failed payment", "id", requestID(ctx), "err", uerr)
		}
		s.metrics.payment("failed")
		return &paymentRefused{err: err, req: req, version: pay.Version, settlement: &st}
	}
}

// deliver answers a settled payment with its content.
func (pr *payRoute) deliver(w http.ResponseWriter, r *http.Request, pay *x402.Payment, req x402.Requirement, st x402.Settlement, body []byte) error {
	s := pr.s
	s.metrics.payment("settled")
	name, value := x402.SettlementHeader(pay.Version, st, "")
	w.Header().Set(name, value)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	w.Write(body)
	payer, _ := pr.ledgerKey(pay)
	s.log.Info("payment settled", "id", requestID(r.Context()), "payer", payer, "amount", req.Amount.String(), "tx", st.Transaction)
	return nil
}

// replayed refuses a payment that has been used.
func (pr *payRoute) replayed(pay *x402.Payment, req x402.Requirement) error {
	pr.s.metrics.payment("refused")
	return &paymentRefused{err: &x402.Error{Reason: x402.ReasonNonceUsed, Message: "this payment authorization was already used or is being processed; sign a new payment with a fresh nonce"}, req: req, version: pay.Version}
}

// retry handles a payment whose (payer, nonce) is already in the ledger,
// for the same resource and amount and signed by its payer: a pending one
// is reconciled and, if it settled, delivered without a second charge; a
// settled one that the background reconciler found settled before the
// payer came back (ReasonUndelivered) is delivered. Each is delivered
// once, to one request. Anything else is a replay.
func (pr *payRoute) retry(w http.ResponseWriter, r *http.Request, pay *x402.Payment, req x402.Requirement, body []byte) error {
	s := pr.s
	ctx := r.Context()
	payer, nonce := pr.ledgerKey(pay)
	rec, err := s.store.PaymentByNonce(ctx, payer, nonce)
	if err != nil && certbank.ErrorCode(err) != certbank.NotFound {
		return err
	}
	if err != nil || pr.cfg.Reconciler == nil || rec.Resource != req.Resource || rec.Amount != int64(req.Amount) {
		return pr.replayed(pay, req)
	}
	if _, verr := x402.VerifyOffline(pay, req, s.now()); verr != nil && x402.ReasonOf(verr) != x402.ReasonValidBefore {
		return pr.replayed(pay, req) // only the payer's own signed payment claims it
	}
	switch {
	case rec.Status == store.Pending:
		st, rerr := pr.cfg.Reconciler.Reconcile(ctx, payer, nonce)
		if rerr == nil && st.Transaction == "" {
			st.Transaction = rec.Transaction
		}
		return pr.finish(w, r, pay, req, body, st, rerr, true)
	case rec.Status == store.Settled && rec.Reason == store.ReasonUndelivered:
		st := x402.Settlement{Transaction: rec.Transaction, Network: rec.Network, Payer: payer}
		return pr.finish(w, r, pay, req, body, st, nil, true)
	}
	return pr.replayed(pay, req)
}

// writePaymentRequired renders a 402 (or another status for a refusal
// that is not a payment problem).
func (s *Server) writePaymentRequired(w http.ResponseWriter, r *http.Request, e *paymentRefused) {
	reason := x402.ReasonOf(e.err)
	msg := certbank.ErrorMessage(e.err)
	errText := msg
	if reason != "" {
		errText = reason
	}
	if e.settlement != nil {
		name, value := x402.SettlementHeader(max(e.version, 1), *e.settlement, reason)
		w.Header().Set(name, value)
	}
	w.Header().Set(x402.HeaderPaymentRequired, e.req.V2Header(errText))
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusPaymentRequired)
	body := e.req.V1Body(errText)
	if reason != "" {
		// Add the human message next to the reason code for people reading it.
		var m map[string]any
		if json.Unmarshal(body, &m) == nil {
			m["message"] = msg
			if b, err := json.Marshal(m); err == nil {
				body = b
			}
		}
	}
	w.Write(body)
}

// reconcileLoop resolves pending payments in the background.
func (pr *payRoute) reconcileLoop() {
	defer close(pr.done)
	t := time.NewTicker(pr.cfg.ReconcileEvery)
	defer t.Stop()
	for {
		select {
		case <-pr.stop:
			return
		case <-t.C:
			pr.reconcilePending(context.Background())
		}
	}
}

// reconcilePending asks the chain about every pending payment and records
// what became of it.
func (pr *payRoute) reconcilePending(ctx context.Context) {
	s := pr.s
	ps, err := s.store.Payments(ctx, store.PaymentFilter{Status: store.Pending, Limit: 100})
	if err != nil {
		s.log.Warn("list pending payments", "err", err)
		return
	}
	for _, p := range ps {
		st, err := pr.cfg.Reconciler.Reconcile(ctx, p.Payer, p.Nonce)
		switch {
		case err == nil && !st.Pending:
			tx := st.Transaction
			if tx == "" {
				tx = p.Transaction
			}
			// Settled, but the payer has not had the content: the
			// payer's retry gets it (see retry), unless a retry running
			// now has already moved the row.
			if _, err := s.store.TransitionPayment(ctx, store.Transition{Payer: p.Payer, Nonce: p.Nonce, From: store.State{Status: store.Pending, Reason: p.Reason}, Update: store.Update{To: store.State{Status: store.Settled, Reason: store.ReasonUndelivered}, Transaction: tx, At: s.now().UTC()}}); err != nil {
				s.log.Warn("record reconciled payment", "payer", p.Payer, "tx", tx, "err", err)
				continue
			}
			s.log.Info("pending payment settled; its content waits for the payer's retry", "payer", p.Payer, "tx", tx)
		case x402.ReasonOf(err) == x402.ReasonTransactionFailed:
			if _, err := s.store.TransitionPayment(ctx, store.Transition{Payer: p.Payer, Nonce: p.Nonce, From: store.State{Status: store.Pending, Reason: p.Reason}, Update: store.Update{To: store.State{Status: store.Failed, Reason: x402.ReasonTransactionFailed}, Transaction: p.Transaction, At: s.now().UTC()}}); err != nil {
				s.log.Warn("record reconciled payment", "payer", p.Payer, "err", err)
			}
		}
	}
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
