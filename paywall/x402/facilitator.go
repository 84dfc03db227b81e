package x402

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/certbank/certbank"
)

// maxFacilitatorBody bounds facilitator request and response bodies.
const maxFacilitatorBody = 64 << 10

// facilitatorRequest is the body of POST /verify and POST /settle.
type facilitatorRequest struct {
	X402Version         int             `json:"x402Version"`
	PaymentPayload      json.RawMessage `json:"paymentPayload"`
	PaymentRequirements json.RawMessage `json:"paymentRequirements"`
}

// verifyResponse is the body of a /verify answer.
type verifyResponse struct {
	IsValid        bool   `json:"isValid"`
	InvalidReason  string `json:"invalidReason,omitempty"`
	InvalidMessage string `json:"invalidMessage,omitempty"`
	Payer          string `json:"payer,omitempty"`
}

// settleResponse is the body of a /settle answer.
type settleResponse struct {
	Success      bool   `json:"success"`
	ErrorReason  string `json:"errorReason,omitempty"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	Transaction  string `json:"transaction"`
	Network      string `json:"network"`
	Payer        string `json:"payer,omitempty"`
}

// SupportedKind is one entry of a facilitator's GET /supported answer.
type SupportedKind struct {
	X402Version int    `json:"x402Version"`
	Scheme      string `json:"scheme"`
	Network     string `json:"network"`
}

// supportedResponse is the body of a /supported answer.
type supportedResponse struct {
	Kinds      []SupportedKind     `json:"kinds"`
	Extensions []string            `json:"extensions"`
	Signers    map[string][]string `json:"signers"`
}

// FacilitatorClient is a Facilitator that calls a remote x402 facilitator:
// POST {URL}/verify and POST {URL}/settle. Before calling out it runs
// VerifyOffline itself, so that a payment that is not ours never leaves the
// process and a faulty facilitator cannot approve one.
type FacilitatorClient struct {
	// URL is the facilitator's base URL, without a trailing slash, e.g.
	// "https://x402.org/facilitator".
	URL string
	// HTTPClient sends the requests; nil means http.DefaultClient. Each call
	// is bounded by VerifyTimeout or SettleTimeout in any case.
	HTTPClient *http.Client
	// Header is added to every request, e.g. for an API key.
	Header http.Header
	// VerifyTimeout bounds /verify and /supported calls; 0 means 10 s.
	VerifyTimeout time.Duration
	// SettleTimeout bounds /settle calls, which wait for the chain; 0
	// means 60 s.
	SettleTimeout time.Duration
	// Now is the clock of the local checks; nil means time.Now.
	Now func() time.Time
}

// Verify implements Facilitator.
func (c *FacilitatorClient) Verify(ctx context.Context, p *Payment, r Requirement) (string, error) {
	payer, err := VerifyOffline(p, r, c.now())
	if err != nil {
		return "", err
	}
	var resp verifyResponse
	if err := c.post(ctx, "/verify", c.VerifyTimeout, 10*time.Second, p, r, &resp, func(raw map[string]json.RawMessage) bool { return raw["isValid"] != nil }); err != nil {
		return "", wrapError(ReasonUnexpectedVerify, "the payment facilitator could not be reached; retry the same payment in a moment", err)
	}
	if !resp.IsValid {
		return "", remoteError(resp.InvalidReason, resp.InvalidMessage, ReasonUnexpectedVerify, "the payment facilitator rejected the payment")
	}
	if resp.Payer != "" && !strings.EqualFold(resp.Payer, payer) {
		return "", newError(ReasonSignature, fmt.Sprintf("the facilitator says the payer is %s, but the signature is by %s", resp.Payer, payer))
	}
	return payer, nil
}

// Settle implements Facilitator. A settlement_pending answer gives a
// pending Settlement together with a ReasonSettlementPending error.
func (c *FacilitatorClient) Settle(ctx context.Context, p *Payment, r Requirement) (Settlement, error) {
	payer, err := VerifyOffline(p, r, c.now())
	if err != nil {
		return Settlement{}, err
	}
	var resp settleResponse
	if err := c.post(ctx, "/settle", c.SettleTimeout, time.Minute, p, r, &resp, func(raw map[string]json.RawMessage) bool { return raw["success"] != nil }); err != nil {
		// The request may have reached the facilitator: only a retry of
		// the same payment can tell whether it settled.
		return Settlement{}, wrapError(ReasonUnexpectedSettle, "the payment facilitator could not be reached; retry the same payment in a moment", err)
	}
	s := Settlement{Transaction: resp.Transaction, Network: r.network().Name, Payer: payer}
	switch {
	case resp.Success:
		return s, nil
	case resp.ErrorReason == ReasonSettlementPending:
		s.Pending = true
		return s, remoteError(resp.ErrorReason, resp.ErrorMessage, "", "")
	}
	return Settlement{}, remoteError(resp.ErrorReason, resp.ErrorMessage, ReasonUnexpectedSettle, "the payment facilitator could not settle the payment")
}

// Supported calls GET {URL}/supported.
func (c *FacilitatorClient) Supported(ctx context.Context) ([]SupportedKind, error) {
	ctx, cancel := context.WithTimeout(ctx, orDefault(c.VerifyTimeout, 10*time.Second))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+"/supported", nil)
	if err != nil {
		return nil, fmt.Errorf("facilitator supported: %w", err)
	}
	var resp supportedResponse
	if err := c.do(req, &resp, nil); err != nil {
		return nil, fmt.Errorf("facilitator supported: %w", err)
	}
	return resp.Kinds, nil
}

func (c *FacilitatorClient) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// post sends p and r to path and decodes the answer into out. A non-2xx
// answer whose JSON isResult accepts is decoded too, as the official client
// does.
func (c *FacilitatorClient) post(ctx context.Context, path string, timeout, def time.Duration, p *Payment, r Requirement, out any, isResult func(map[string]json.RawMessage) bool) error {
	body, err := json.Marshal(facilitatorRequest{
		X402Version:         p.Version,
		PaymentPayload:      p.JSON(),
		PaymentRequirements: r.wireJSON(p.Version),
	})
	if err != nil {
		return fmt.Errorf("facilitator %s: encode: %w", path, err)
	}
	ctx, cancel := context.WithTimeout(ctx, orDefault(timeout, def))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("facilitator %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if err := c.do(req, out, isResult); err != nil {
		return fmt.Errorf("facilitator %s: %w", path, err)
	}
	return nil
}

func (c *FacilitatorClient) do(req *http.Request, out any, isResult func(map[string]json.RawMessage) bool) error {
	for k, vs := range c.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Accept", "application/json")
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxFacilitatorBody+1))
	if err != nil {
		return fmt.Errorf("read answer: %w", err)
	}
	if len(raw) > maxFacilitatorBody {
		return fmt.Errorf("answer larger than %d bytes", maxFacilitatorBody)
	}
	if resp.StatusCode/100 != 2 {
		var probe map[string]json.RawMessage
		if isResult == nil || json.Unmarshal(raw, &probe) != nil || !isResult(probe) {
			return fmt.Errorf("status %s", resp.Status)
		}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode answer: %w", err)
	}
	return nil
}

// remoteError turns a facilitator's reason and message into an *Error,
// substituting fallbacks for empty ones.
func remoteError(reason, message, fallbackReason, fallbackMessage string) *Error {
	if reason == "" {
		reason = fallbackReason
	}
	if message == "" {
		message = fallbackMessage
		if message == "" {
			message = "the payment facilitator answered " + reason
		}
	}
	return newError(reason, message)
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// wireJSON is r as a paymentRequirements object of the given version.
func (r Requirement) wireJSON(version int) json.RawMessage {
	var v any = r.v1()
	if version == 2 {
		v = r.v2()
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("x402: marshal requirement: %v", err)) // strings and ints
	}
	return b
}

// FacilitatorServer is an http.Handler serving the x402 facilitator API on
// top of a Facilitator (for example Local, a Verifier over a Settler):
//
//	POST /verify     {x402Version, paymentPayload, paymentRequirements} → {isValid, invalidReason, invalidMessage, payer}
//	POST /settle     same body → {success, errorReason, errorMessage, transaction, network, payer}
//	GET  /supported  → {kinds, extensions, signers}
//
// /settle verifies before settling. Verification and settlement failures
// are answered with status 200 and a reason, malformed requests with 400.
// Mount it under a prefix with http.StripPrefix; run it in an http.Server
// with timeouts.
type FacilitatorServer struct {
	// Facilitator does the work. It must be set.
	Facilitator Facilitator
	// Networks are the networks served (names LookupNetwork accepts);
	// payments for others are refused. It must not be empty.
	Networks []string
	// SettleTimeout bounds one settlement; 0 means 60 s.
	SettleTimeout time.Duration
}

// ServeHTTP implements http.Handler.
func (s *FacilitatorServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/verify", "/settle":
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "use POST"})
			return
		}
		if r.URL.Path == "/verify" {
			s.verify(w, r)
		} else {
			s.settle(w, r)
		}
	case "/supported":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "use GET"})
			return
		}
		s.supported(w)
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not found; the facilitator serves POST /verify, POST /settle and GET /supported"})
	}
}

func (s *FacilitatorServer) verify(w http.ResponseWriter, r *http.Request) {
	p, req, err := s.parse(w, r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, verifyResponse{InvalidReason: ReasonOf(err), InvalidMessage: messageOf(err)})
		return
	}
	payer, err := s.Facilitator.Verify(r.Context(), p, req)
	if err != nil {
		writeJSON(w, http.StatusOK, verifyResponse{InvalidReason: reasonOr(err, ReasonUnexpectedVerify), InvalidMessage: messageOf(err), Payer: checksumAddress(p.Authorization.From)})
		return
	}
	writeJSON(w, http.StatusOK, verifyResponse{IsValid: true, Payer: payer})
}

func (s *FacilitatorServer) settle(w http.ResponseWriter, r *http.Request) {
	p, req, err := s.parse(w, r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, settleResponse{ErrorReason: ReasonOf(err), ErrorMessage: messageOf(err)})
		return
	}
	network := req.network().wireName(p.Version)
	payer := checksumAddress(p.Authorization.From)
	ctx, cancel := context.WithTimeout(r.Context(), orDefault(s.SettleTimeout, time.Minute))
	defer cancel()
	if _, err := s.Facilitator.Verify(ctx, p, req); err != nil {
		writeJSON(w, http.StatusOK, settleResponse{ErrorReason: reasonOr(err, ReasonUnexpectedSettle), ErrorMessage: messageOf(err), Network: network, Payer: payer})
		return
	}
	st, err := s.Facilitator.Settle(ctx, p, req)
	if err != nil {
		writeJSON(w, http.StatusOK, settleResponse{ErrorReason: reasonOr(err, ReasonUnexpectedSettle), ErrorMessage: messageOf(err), Transaction: st.Transaction, Network: network, Payer: payer})
		return
	}
	writeJSON(w, http.StatusOK, settleResponse{Success: true, Transaction: st.Transaction, Network: network, Payer: st.Payer})
}

func (s *FacilitatorServer) supported(w http.ResponseWriter) {
	resp := supportedResponse{Kinds: []SupportedKind{}, Extensions: []string{}, Signers: map[string][]string{}}
	for _, version := range []int{1, 2} {
		for _, name := range s.Networks {
			if n, ok := LookupNetwork(name); ok {
				resp.Kinds = append(resp.Kinds, SupportedKind{X402Version: version, Scheme: SchemeExact, Network: n.wireName(version)})
			}
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

// parse reads a /verify or /settle body into our types.
func (s *FacilitatorServer) parse(w http.ResponseWriter, r *http.Request) (*Payment, Requirement, error) {
	var body facilitatorRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxFacilitatorBody))
	if err := dec.Decode(&body); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, Requirement{}, newError(ReasonInvalidPayload, fmt.Sprintf("the request body is larger than %d bytes", maxFacilitatorBody))
		}
		return nil, Requirement{}, wrapError(ReasonInvalidPayload, "the request body is not {x402Version, paymentPayload, paymentRequirements} JSON: "+jsonProblem(err), err)
	}
	if body.X402Version != 1 && body.X402Version != 2 {
		return nil, Requirement{}, newError(ReasonInvalidVersion, fmt.Sprintf("x402Version %d is not supported; use 1 or 2", body.X402Version))
	}
	if len(body.PaymentPayload) == 0 || len(body.PaymentRequirements) == 0 {
		return nil, Requirement{}, newError(ReasonInvalidPayload, "the request needs paymentPayload and paymentRequirements")
	}
	p, err := decodePayment(body.X402Version, body.PaymentPayload)
	if err != nil {
		return nil, Requirement{}, err
	}
	req, err := parseRequirement(body.X402Version, body.PaymentRequirements)
	if err != nil {
		return nil, Requirement{}, err
	}
	served := false
	for _, name := range s.Networks {
		if n, ok := LookupNetwork(name); ok && n.is(req.Network) {
			served = true
		}
	}
	if !served {
		return nil, Requirement{}, newError(ReasonNetworkMismatch, fmt.Sprintf("this facilitator does not serve network %q; see GET /supported", req.Network))
	}
	return p, req, nil
}

// parseRequirement reads a paymentRequirements object of the given version
// into a Requirement, refusing anything but USDC with its EIP-712 domain.
func parseRequirement(version int, raw json.RawMessage) (Requirement, error) {
	var (
		scheme, network, amount, asset, payTo string
		timeout                               int
		extra                                 *eip712Extra
		req                                   Requirement
	)
	if version == 1 {
		var v1 v1Requirement
		if err := json.Unmarshal(raw, &v1); err != nil {
			return req, wrapError(ReasonInvalidRequirements, "paymentRequirements is not a version 1 requirement: "+jsonProblem(err), err)
		}
		scheme, network, amount, asset, payTo, timeout, extra = v1.Scheme, v1.Network, v1.MaxAmountRequired, v1.Asset, v1.PayTo, v1.MaxTimeoutSeconds, v1.Extra
		req.Resource, req.Description, req.MimeType = v1.Resource, v1.Description, v1.MimeType
	} else {
		var v2 v2Requirement
		if err := json.Unmarshal(raw, &v2); err != nil {
			return req, wrapError(ReasonInvalidRequirements, "paymentRequirements is not a version 2 requirement: "+jsonProblem(err), err)
		}
		scheme, network, amount, asset, payTo, timeout, extra = v2.Scheme, v2.Network, v2.Amount, v2.Asset, v2.PayTo, v2.MaxTimeoutSeconds, v2.Extra
	}
	if scheme != SchemeExact {
		return req, newError(ReasonScheme, fmt.Sprintf("scheme %q is not supported; only %q is", scheme, SchemeExact))
	}
	n, ok := LookupNetwork(network)
	if !ok {
		return req, newError(ReasonNetworkMismatch, fmt.Sprintf("network %q is not supported", network))
	}
	if !strings.EqualFold(asset, n.Asset) {
		return req, newError(ReasonInvalidRequirements, fmt.Sprintf("asset %s is not USDC on %s (%s)", asset, n.Name, n.Asset))
	}
	switch {
	case extra == nil:
		return req, newError(ReasonMissingDomain, "paymentRequirements.extra must carry the token's EIP-712 name and version")
	case extra.Name != n.TokenName:
		return req, newError(ReasonTokenNameMismatch, fmt.Sprintf("extra.name %q is not the token's name %q", extra.Name, n.TokenName))
	case extra.Version != n.TokenVersion:
		return req, newError(ReasonTokenVersionMismatch, fmt.Sprintf("extra.version %q is not the token's version %q", extra.Version, n.TokenVersion))
	}
	value, ok := atoi64(amount)
	if !ok || value == 0 {
		return req, newError(ReasonInvalidRequirements, fmt.Sprintf("amount %q is not a positive decimal integer", amount))
	}
	req.Network, req.PayTo, req.Amount, req.MaxTimeoutSeconds = n.Name, payTo, certbank.USDC(value), timeout
	if !isHexAddress(payTo) {
		return req, newError(ReasonInvalidRequirements, fmt.Sprintf("payTo %q is not an address", payTo))
	}
	return req, nil
}

func reasonOr(err error, fallback string) string {
	if r := ReasonOf(err); r != "" {
		return r
	}
	return fallback
}

// messageOf is the client-safe message of err.
func messageOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
