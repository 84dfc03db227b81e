package x402

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// Settler moves the money of verified payments and answers the chain reads
// that verification needs. DevChain, RPCSettler and FacilitatorClient (for
// Settle only) implement it.
type Settler interface {
	ChainState
	// Settle submits p's authorization and waits for the outcome. On
	// success it returns the transaction. On failure it returns an *Error:
	// ReasonTransactionFailed when the token refused the transfer (nothing
	// was charged), ReasonUnexpectedSettle when nothing could be sent, and
	// ReasonSettlementPending, together with a Settlement whose Pending is
	// true and whose Transaction is set, when the transaction was sent but
	// not confirmed in time: the payment must then be reconciled, never
	// asked for again.
	Settle(ctx context.Context, p *Payment, r Requirement) (Settlement, error)
}

// Reconciler resolves pending settlements. RPCSettler and DevChain
// implement it.
type Reconciler interface {
	// Reconcile reports what became of the authorization (from, nonce): a
	// Settlement with Pending false when it was used (the money moved to
	// the payee it names), a Settlement with Pending true and a
	// ReasonSettlementPending *Error while that is unknown, or a
	// ReasonTransactionFailed *Error when the payer canceled it or our
	// settlement reverted without using it. (In the second case only a
	// copy of the authorization submitted by someone else before its
	// validBefore could still move the money.)
	Reconcile(ctx context.Context, from, nonce string) (Settlement, error)
}

// Settlement is the outcome of a settled (or pending) payment.
type Settlement struct {
	// Transaction is the 0x hash of the settling transaction; "" when none
	// is known.
	Transaction string
	// Network is the version 1 name of the network, e.g. "base".
	Network string
	// Payer is the EIP-55 address of the payer.
	Payer string
	// Pending is true when the transaction was broadcast but its outcome is
	// not known yet.
	Pending bool
}

// SettlementResponse is the JSON of the X-PAYMENT-RESPONSE and
// PAYMENT-RESPONSE headers.
type SettlementResponse struct {
	Success     bool   `json:"success"`
	ErrorReason string `json:"errorReason,omitempty"`
	Transaction string `json:"transaction"`
	Network     string `json:"network"`
	Payer       string `json:"payer,omitempty"`
}

// SettlementHeader renders the settlement response header of protocol
// version (1 or 2): X-PAYMENT-RESPONSE with network "base", or
// PAYMENT-RESPONSE with network "eip155:8453". success is true only when
// errReason is empty and s is not pending; a pending s without a reason gets
// ReasonSettlementPending.
func SettlementHeader(version int, s Settlement, errReason string) (name, value string) {
	if s.Pending && errReason == "" {
		errReason = ReasonSettlementPending
	}
	network := s.Network
	if n, ok := LookupNetwork(s.Network); ok {
		network = n.wireName(version)
	}
	b, err := json.Marshal(SettlementResponse{
		Success:     errReason == "",
		ErrorReason: errReason,
		Transaction: s.Transaction,
		Network:     network,
		Payer:       s.Payer,
	})
	if err != nil {
		panic(fmt.Sprintf("x402: marshal settlement: %v", err)) // strings and a bool
	}
	name = HeaderPaymentResponse
	if version == 2 {
		name = HeaderSettlementResponse
	}
	return name, base64.StdEncoding.EncodeToString(b)
}

// ParseSettlementHeader decodes the value of an X-PAYMENT-RESPONSE or
// PAYMENT-RESPONSE header.
func ParseSettlementHeader(value string) (SettlementResponse, error) {
	var s SettlementResponse
	if len(value) > MaxHeaderBytes {
		return s, fmt.Errorf("settlement header of %d bytes is larger than %d", len(value), MaxHeaderBytes)
	}
	raw, err := decodeBase64(value)
	if err != nil {
		return s, fmt.Errorf("settlement header is not standard base64: %w", err)
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("settlement header is not settlement JSON: %w", err)
	}
	return s, nil
}

// Facilitator is both halves of accepting a payment. Local and
// FacilitatorClient implement it; FacilitatorServer serves one over HTTP.
type Facilitator interface {
	// Verify checks p against r and returns the payer (see Verifier.Verify).
	Verify(ctx context.Context, p *Payment, r Requirement) (payer string, err error)
	// Settle moves the money (see Settler.Settle).
	Settle(ctx context.Context, p *Payment, r Requirement) (Settlement, error)
}

// Local is an in-process Facilitator: a Verifier over a Settler's chain
// reads, and that Settler.
type Local struct {
	Verifier Verifier
	Settler  Settler
}

// NewLocal returns a Local that verifies against s's chain with the wall
// clock and settles through s.
func NewLocal(s Settler) *Local {
	return &Local{Verifier: Verifier{Chain: s}, Settler: s}
}

// Verify implements Facilitator.
func (l *Local) Verify(ctx context.Context, p *Payment, r Requirement) (string, error) {
	return l.Verifier.Verify(ctx, p, r)
}

// Settle implements Facilitator.
func (l *Local) Settle(ctx context.Context, p *Payment, r Requirement) (Settlement, error) {
	return l.Settler.Settle(ctx, p, r)
}
