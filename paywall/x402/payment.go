package x402

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
)

// Header names of both protocol versions.
const (
	// HeaderPayment carries a version 1 payment (request).
	HeaderPayment = "X-PAYMENT"
	// HeaderPaymentResponse carries a version 1 settlement (response).
	HeaderPaymentResponse = "X-PAYMENT-RESPONSE"
	// HeaderPaymentRequired carries version 2 requirements (402 response).
	HeaderPaymentRequired = "PAYMENT-REQUIRED"
	// HeaderPaymentSignature carries a version 2 payment (request).
	HeaderPaymentSignature = "PAYMENT-SIGNATURE"
	// HeaderSettlementResponse carries a version 2 settlement (response).
	HeaderSettlementResponse = "PAYMENT-RESPONSE"
)

// MaxHeaderBytes is the largest payment header Decode accepts. An EOA
// payment is about 1 KiB in version 1 and 1.5 KiB in version 2.
const MaxHeaderBytes = 8 << 10

// maxUint256 bounds the numeric strings of an authorization.
var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// Payment is a decoded x402 "exact" EVM payment.
type Payment struct {
	// Version is the x402 protocol version: 1 (X-PAYMENT) or 2
	// (PAYMENT-SIGNATURE).
	Version int
	// Scheme and Network are the scheme and network the payer chose: the
	// payload's own fields in version 1, those of Accepted in version 2.
	Scheme  string
	Network string
	// Accepted is the requirement the payer accepted (version 2 only).
	Accepted *Accepted
	// Authorization is the signed EIP-3009 TransferWithAuthorization.
	Authorization Authorization
	// Signature is the payer's signature over Authorization: 65 bytes for
	// an externally owned account.
	Signature []byte

	// raw is the payload JSON exactly as received, forwarded verbatim to a
	// facilitator.
	raw json.RawMessage
}

// Authorization is an EIP-3009 TransferWithAuthorization message.
type Authorization struct {
	From        string   // payer, 0x hex
	To          string   // payee, 0x hex
	Value       *big.Int // atomic units
	ValidAfter  *big.Int // unix seconds; the token requires block time > ValidAfter
	ValidBefore *big.Int // unix seconds; the token requires block time < ValidBefore
	Nonce       string   // 32 bytes, 0x hex, lower case
}

// Accepted is the requirement a version 2 payer says it accepted. Keys that
// we do not know are ignored (clients may add some); Verify compares every
// key we sent against our own requirement.
type Accepted struct {
	Scheme            string
	Network           string
	Amount            string
	Asset             string
	PayTo             string
	MaxTimeoutSeconds int64
	// Name and Version are extra.name and extra.version; HasDomain is false
	// when the payer sent no extra or an extra without them.
	Name, Version string
	HasDomain     bool
}

// ReplayKey identifies the authorization on chain: payer and nonce, lower
// case. Two payments with the same key can settle at most once between them.
func (p *Payment) ReplayKey() string {
	return strings.ToLower(p.Authorization.From) + "/" + strings.ToLower(p.Authorization.Nonce)
}

// JSON returns the payment payload as received, or, for a Payment built in
// code, its canonical JSON.
func (p *Payment) JSON() []byte {
	if p.raw != nil {
		return p.raw
	}
	b, err := json.Marshal(p.wire())
	if err != nil {
		panic(fmt.Sprintf("x402: marshal payment: %v", err)) // strings only
	}
	return b
}

// Header returns the header name and value that carry p: X-PAYMENT for
// version 1, PAYMENT-SIGNATURE for version 2.
func (p *Payment) Header() (name, value string) {
	name = HeaderPayment
	if p.Version == 2 {
		name = HeaderPaymentSignature
	}
	return name, base64.StdEncoding.EncodeToString(p.JSON())
}

// wireAuthorization is the JSON of an authorization: every value a string.
type wireAuthorization struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Value       string `json:"value"`
	ValidAfter  string `json:"validAfter"`
	ValidBefore string `json:"validBefore"`
	Nonce       string `json:"nonce"`
}

// wireExactPayload is the scheme payload of an EVM exact payment.
type wireExactPayload struct {
	Signature     string            `json:"signature"`
	Authorization wireAuthorization `json:"authorization"`
}

// wirePayment is the union of both versions' PaymentPayload. Decoding
// rejects unknown keys everywhere except inside accepted, resource and
// extensions; decodePayment then checks which keys each version allows.
type wirePayment struct {
	X402Version *int              `json:"x402Version"`
	Scheme      *string           `json:"scheme,omitempty"`
	Network     *string           `json:"network,omitempty"`
	Resource    json.RawMessage   `json:"resource,omitempty"`
	Accepted    json.RawMessage   `json:"accepted,omitempty"`
	Payload     *wireExactPayload `json:"payload"`
	Extensions  json.RawMessage   `json:"extensions,omitempty"`
}

// wireAccepted is the lenient form of a version 2 accepted requirement.
type wireAccepted struct {
	Scheme            string          `json:"scheme"`
	Network           string          `json:"network"`
	Amount            string          `json:"amount"`
	Asset             string          `json:"asset"`
	PayTo             string          `json:"payTo"`
	MaxTimeoutSeconds int64           `json:"maxTimeoutSeconds"`
	Extra             json.RawMessage `json:"extra"`
}

func (p *Payment) wire() wirePayment {
	a := p.Authorization
	w := wirePayment{
		X402Version: &p.Version,
		Payload: &wireExactPayload{
			Signature: "0x" + hex.EncodeToString(p.Signature),
			Authorization: wireAuthorization{
				From:        a.From,
				To:          a.To,
				Value:       decimal(a.Value),
				ValidAfter:  decimal(a.ValidAfter),
				ValidBefore: decimal(a.ValidBefore),
				Nonce:       a.Nonce,
			},
		},
	}
	if p.Version != 2 {
		w.Scheme, w.Network = &p.Scheme, &p.Network
		return w
	}
	if acc := p.Accepted; acc != nil {
		req := v2Requirement{
			Scheme:            acc.Scheme,
			Network:           acc.Network,
			Amount:            acc.Amount,
			Asset:             acc.Asset,
			PayTo:             acc.PayTo,
			MaxTimeoutSeconds: int(acc.MaxTimeoutSeconds),
		}
		if acc.HasDomain {
			req.Extra = &eip712Extra{Name: acc.Name, Version: acc.Version}
		}
		w.Accepted, _ = json.Marshal(req)
	}
	return w
}

func decimal(x *big.Int) string {
	if x == nil {
		return "0"
	}
	return x.String()
}

// Decode parses the value of a payment header. headerName is X-PAYMENT
// (version 1) or PAYMENT-SIGNATURE (version 2), in any case. The value must
// be at most MaxHeaderBytes of standard, padded base64 of a JSON
// PaymentPayload whose x402Version matches the header.
//
// Decoding is strict where the protocol is fixed: unknown keys are refused
// in the envelope, payload and authorization; addresses are 0x plus 40 hex
// digits, the nonce 0x plus 64, the signature 0x-prefixed hex, and value,
// validAfter and validBefore decimal strings of uint256 values. It is lenient
// inside version 2's accepted, resource and extensions, where official
// clients add keys.
//
// Errors are *Error with ReasonInvalidPayload or ReasonInvalidVersion.
// Decode checks form only; Match and VerifyOffline check meaning.
func Decode(headerName, value string) (*Payment, error) {
	var version int
	switch {
	case strings.EqualFold(headerName, HeaderPayment):
		version = 1
	case strings.EqualFold(headerName, HeaderPaymentSignature):
		version = 2
	default:
		return nil, newError(ReasonInvalidPayload, fmt.Sprintf("%q is not a payment header; send X-PAYMENT (x402 version 1) or PAYMENT-SIGNATURE (version 2)", headerName))
	}
	if len(value) > MaxHeaderBytes {
		return nil, newError(ReasonInvalidPayload, fmt.Sprintf("the %s header is %d bytes, more than the %d allowed; an EOA payment needs about 1.5 KiB", headerName, len(value), MaxHeaderBytes))
	}
	raw, err := decodeBase64(value)
	if err != nil {
		return nil, wrapError(ReasonInvalidPayload, fmt.Sprintf("the %s header is not standard base64 (RFC 4648 alphabet, with = padding) of the payment JSON", headerName), err)
	}
	return decodePayment(version, raw)
}

// decodeBase64 decodes standard padded base64 and nothing else: no URL-safe
// alphabet, no missing padding, no whitespace.
func decodeBase64(s string) ([]byte, error) {
	if s == "" {
		return nil, errors.New("empty value")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '=') {
			return nil, fmt.Errorf("byte %q at offset %d is outside the standard base64 alphabet", c, i)
		}
	}
	return base64.StdEncoding.Strict().DecodeString(s)
}

// decodePayment parses payment JSON that claims to be of version want (1 or
// 2), or of either version when want is 0.
func decodePayment(want int, raw []byte) (*Payment, error) {
	var w wirePayment
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, wrapError(ReasonInvalidPayload, "the payment is not valid x402 JSON: "+jsonProblem(err), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, newError(ReasonInvalidPayload, "the payment JSON has data after its closing brace")
	}
	if w.X402Version == nil {
		return nil, newError(ReasonInvalidVersion, "the payment has no x402Version")
	}
	v := *w.X402Version
	if v != 1 && v != 2 || want != 0 && v != want {
		return nil, newError(ReasonInvalidVersion, versionMessage(want, v))
	}
	p := &Payment{Version: v, raw: json.RawMessage(raw)}
	switch v {
	case 1:
		if w.Accepted != nil || w.Resource != nil || w.Extensions != nil {
			return nil, newError(ReasonInvalidPayload, "an x402 version 1 payment has only x402Version, scheme, network and payload; accepted, resource and extensions belong to version 2")
		}
		if w.Scheme == nil || w.Network == nil {
			return nil, newError(ReasonInvalidPayload, "an x402 version 1 payment needs scheme and network")
		}
		p.Scheme, p.Network = *w.Scheme, *w.Network
	case 2:
		if w.Scheme != nil || w.Network != nil {
			return nil, newError(ReasonInvalidPayload, "an x402 version 2 payment carries scheme and network inside accepted, not at the top level")
		}
		if w.Accepted == nil {
			return nil, newError(ReasonInvalidPayload, "an x402 version 2 payment needs accepted: a copy of the requirement you chose from PAYMENT-REQUIRED")
		}
		acc, err := decodeAccepted(w.Accepted)
		if err != nil {
			return nil, err
		}
		p.Accepted = acc
		p.Scheme, p.Network = acc.Scheme, acc.Network
	}
	if w.Payload == nil {
		return nil, newError(ReasonInvalidPayload, "the payment has no payload")
	}
	if err := p.setPayload(w.Payload); err != nil {
		return nil, err
	}
	return p, nil
}

func versionMessage(want, got int) string {
	switch want {
	case 1:
		return fmt.Sprintf("X-PAYMENT carries x402 version 1 payments, this one says version %d; send version 2 payments in PAYMENT-SIGNATURE", got)
	case 2:
		return fmt.Sprintf("PAYMENT-SIGNATURE carries x402 version 2 payments, this one says version %d; send version 1 payments in X-PAYMENT", got)
	}
	return fmt.Sprintf("x402 version %d is not supported; use 1 or 2", got)
}

func decodeAccepted(raw json.RawMessage) (*Accepted, error) {
	var w wireAccepted
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, wrapError(ReasonInvalidPayload, "accepted is not a requirement object: "+jsonProblem(err), err)
	}
	acc := &Accepted{
		Scheme:            w.Scheme,
		Network:           w.Network,
		Amount:            w.Amount,
		Asset:             w.Asset,
		PayTo:             w.PayTo,
		MaxTimeoutSeconds: w.MaxTimeoutSeconds,
	}
	if len(w.Extra) > 0 && !bytes.Equal(w.Extra, []byte("null")) {
		var extra struct {
			Name    *string `json:"name"`
			Version *string `json:"version"`
		}
		if err := json.Unmarshal(w.Extra, &extra); err != nil {
			return nil, wrapError(ReasonInvalidPayload, "accepted.extra is not an object with string name and version: "+jsonProblem(err), err)
		}
		if extra.Name != nil && extra.Version != nil {
			acc.Name, acc.Version, acc.HasDomain = *extra.Name, *extra.Version, true
		}
	}
	return acc, nil
}

func (p *Payment) setPayload(w *wireExactPayload) error {
	a := w.Authorization
	for _, f := range []struct{ name, value string }{{"from", a.From}, {"to", a.To}} {
		if !isHexAddress(f.value) {
			return newError(ReasonInvalidPayload, fmt.Sprintf("authorization.%s %q is not a 0x-prefixed 20-byte hex address", f.name, f.value))
		}
	}
	if len(a.Nonce) != 66 || !hasHexPrefix(a.Nonce) || !isHex(a.Nonce[2:]) {
		return newError(ReasonInvalidPayload, fmt.Sprintf("authorization.nonce %q is not 32 bytes of 0x-prefixed hex", a.Nonce))
	}
	var err error
	auth := Authorization{From: a.From, To: a.To, Nonce: "0x" + strings.ToLower(a.Nonce[2:])}
	if auth.Value, err = parseUint256("value", a.Value); err != nil {
		return err
	}
	if auth.ValidAfter, err = parseUint256("validAfter", a.ValidAfter); err != nil {
		return err
	}
	if auth.ValidBefore, err = parseUint256("validBefore", a.ValidBefore); err != nil {
		return err
	}
	sig := w.Signature
	if !hasHexPrefix(sig) || len(sig)%2 != 0 || len(sig) == 2 || !isHex(sig[2:]) {
		return newError(ReasonInvalidPayload, "payload.signature is not 0x-prefixed hex of whole bytes")
	}
	p.Signature, _ = hex.DecodeString(sig[2:])
	p.Authorization = auth
	return nil
}

// parseUint256 parses a decimal string of a uint256: digits only, no sign,
// no exponent.
func parseUint256(field, s string) (*big.Int, error) {
	bad := func() error {
		return newError(ReasonInvalidPayload, fmt.Sprintf("authorization.%s %q is not a decimal string of a non-negative integer below 2^256", field, s))
	}
	if s == "" || len(s) > 78 {
		return nil, bad()
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return nil, bad()
		}
	}
	x, ok := new(big.Int).SetString(s, 10)
	if !ok || x.Cmp(maxUint256) > 0 {
		return nil, bad()
	}
	return x, nil
}

// jsonProblem describes a JSON decoding error without echoing input.
func jsonProblem(err error) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field != "" {
			return fmt.Sprintf("%s must be a JSON %s, not %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
		}
		return fmt.Sprintf("expected an object, found %s", typeErr.Value)
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("syntax error at offset %d", syntaxErr.Offset)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return strings.TrimPrefix(err.Error(), "json: ") + " (not allowed here)"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends too early"
	}
	return "malformed JSON"
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "int", "int64", "uint8":
		return "integer"
	case "ptr", "struct", "map":
		return "object"
	}
	return goKind
}

// parsed returns the typed form of p's authorization. Decode has checked
// the formats; a hand-built Payment with bad strings yields zero values,
// which fail verification.
func (a Authorization) parsed() authorization {
	out := authorization{
		from:        common.HexToAddress(a.From),
		to:          common.HexToAddress(a.To),
		value:       orZero(a.Value),
		validAfter:  orZero(a.ValidAfter),
		validBefore: orZero(a.ValidBefore),
		nonce:       common.HexToHash(a.Nonce),
	}
	return out
}

func orZero(x *big.Int) *big.Int {
	if x == nil || x.Sign() < 0 || x.Cmp(maxUint256) > 0 {
		return new(big.Int)
	}
	return x
}
