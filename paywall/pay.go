package paywall

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/bank"
	"github.com/certbank/certbank/paywall/ledger"
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

// payRoute is the pay-per-request door over the ledger.
type payRoute struct {
	ledger *ledger.Ledger
	cancel context.CancelFunc
	done   chan struct{}
}

func newPayRoute(s *Server, c PayConfig) (*payRoute, error) {
	site := s.cfg.Bank.Site
	if _, ok := x402.LookupNetwork(site.Payment.Network); !ok {
		return nil, fmt.Errorf("paywall: payment network %q is not supported", site.Payment.Network)
	}
	l, err := ledger.New(ledger.Config{Store: s.store, Facilitator: c.Facilitator, Reconciler: c.Reconciler,
		SettleTimeout: c.SettleTimeout, Now: s.now, Logger: s.log})
	if err != nil {
		return nil, fmt.Errorf("paywall: %w", err)
	}
	if c.ReconcileEvery == 0 {
		c.ReconcileEvery = 30 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &payRoute{ledger: l, cancel: cancel, done: make(chan struct{})}
	if c.Reconciler != nil && c.ReconcileEvery > 0 {
		go func() {
			defer close(p.done)
			l.Run(ctx, c.ReconcileEvery)
		}()
	} else {
		close(p.done)
	}
	return p, nil
}

func (p *payRoute) close() {
	p.cancel()
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
	// v2Text, if set, is the v2 header's error text where it differs
	// from the v1 body's.
	v2Text string
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
		return &paymentRefused{err: certbank.Errorf(certbank.PaymentRequired, "X-PAYMENT header is required"), req: req,
			v2Text: "PAYMENT-SIGNATURE header is required"} // each version names its own header
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
	return s.answer(w, r, pay, req, body, s.pay.ledger.Accept(r.Context(), pay, req))
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

// answer renders a ledger outcome: the content once settled, a 402, a
// 503 settlement_pending with the settlement header, or an error.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, pay *x402.Payment, req x402.Requirement, body []byte, o ledger.Outcome) error {
	switch o.Verdict {
	case ledger.Deliver:
		s.metrics.payment("settled")
		name, value := x402.SettlementHeader(pay.Version, *o.Settlement, "")
		w.Header().Set(name, value)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		w.Write(body)
		payer, _ := ledger.Key(pay)
		s.log.Info("payment settled", "id", requestID(r.Context()), "payer", payer, "amount", req.Amount.String(), "tx", o.Settlement.Transaction)
		return nil
	case ledger.Pending:
		s.metrics.payment("pending")
		name, value := x402.SettlementHeader(pay.Version, *o.Settlement, x402.ReasonSettlementPending)
		w.Header().Set(name, value)
		return o.Err
	case ledger.Refuse:
		if o.Settlement != nil {
			s.metrics.payment("failed")
		} else {
			s.metrics.payment("refused")
		}
		return &paymentRefused{err: o.Err, req: req, version: pay.Version, settlement: o.Settlement}
	}
	if certbank.ErrorCode(o.Err) == certbank.Unavailable {
		s.metrics.payment("refused")
	}
	return o.Err
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
	v2Text := errText
	if e.v2Text != "" {
		v2Text = e.v2Text
	}
	w.Header().Set(x402.HeaderPaymentRequired, e.req.V2Header(v2Text))
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

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
