package x402

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/certbank/certbank"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// maxPayBody bounds the response bodies Pay reads.
const maxPayBody = 32 << 20

// payValidAfterSkew is how far back Pay dates validAfter, like the official
// version 1 client, so that a payee whose clock is behind still accepts it.
const payValidAfterSkew = 600 * time.Second

// Result is the outcome of Pay.
type Result struct {
	// Status and Body are those of the last response: the paid one, or the
	// first one when no payment was needed or made.
	Status int
	Body   []byte
	// Settlement is the decoded X-PAYMENT-RESPONSE or PAYMENT-RESPONSE
	// header of the paid response, nil if it had none.
	Settlement *SettlementResponse
	// Amount is what was authorized; 0 when nothing was.
	Amount certbank.USDC
	// Version is the x402 version of the payment; 0 when none was made.
	Version int
}

// Pay fetches url with GET and, if the answer is a 402, pays and fetches it
// again: it reads the requirements (the version 2 PAYMENT-REQUIRED header or
// the version 1 JSON body, preferring version 2 when preferV2 is set and
// both are offered), picks the first "exact" USDC requirement on a known
// network, refuses amounts above maxAmount, signs an EIP-3009
// TransferWithAuthorization with privateKeyHex (validAfter now - 600 s,
// validBefore now + maxTimeoutSeconds, a random nonce), retries with
// X-PAYMENT or PAYMENT-SIGNATURE, and decodes the settlement header.
//
// client nil means an http.Client with a 60 s timeout. A non-402 first
// answer is returned as it is, without paying. A paid request that the
// server refuses comes back as a Result with Status 402 (its body or
// settlement header says why), not as an error. An error before the paid
// request means nothing was signed or sent; an error after it means the
// outcome is unknown, and the Result holds what is known.
func Pay(ctx context.Context, client *http.Client, url, privateKeyHex string, maxAmount certbank.USDC, preferV2 bool) (Result, error) {
	key, err := parsePrivateKey(privateKeyHex)
	if err != nil {
		return Result{}, fmt.Errorf("pay: %w", err)
	}
	if client == nil {
		client = &http.Client{Timeout: time.Minute}
	}
	status, header, body, err := get(ctx, client, url, "", "")
	if err != nil {
		return Result{}, fmt.Errorf("pay: %w", err)
	}
	res := Result{Status: status, Body: body}
	if status != http.StatusPaymentRequired {
		return res, nil
	}
	offer, err := chooseOffer(header, body, preferV2)
	if err != nil {
		return res, fmt.Errorf("pay: %w", err)
	}
	if offer.amount > maxAmount {
		return res, fmt.Errorf("pay: %s costs %s USDC, more than the maximum of %s USDC you allowed", url, offer.amount, maxAmount)
	}
	name, value, err := offer.sign(key, time.Now())
	if err != nil {
		return res, fmt.Errorf("pay: %w", err)
	}
	res.Amount, res.Version = offer.amount, offer.version
	status, header, body, err = get(ctx, client, url, name, value)
	if err != nil {
		return res, fmt.Errorf("pay: paid request (the payment may or may not have been used): %w", err)
	}
	res.Status, res.Body = status, body
	for _, h := range []string{HeaderSettlementResponse, HeaderPaymentResponse} {
		if v := header.Get(h); v != "" {
			s, err := ParseSettlementHeader(v)
			if err != nil {
				return res, fmt.Errorf("pay: %s header: %w", h, err)
			}
			res.Settlement = &s
			break
		}
	}
	return res, nil
}

func get(ctx context.Context, client *http.Client, url, headerName, headerValue string) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("request %s: %w", url, err)
	}
	req.Header.Set("Accept", "application/json")
	if headerName != "" {
		req.Header.Set(headerName, headerValue)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPayBody+1))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("GET %s: read body: %w", url, err)
	}
	if len(body) > maxPayBody {
		return 0, nil, nil, fmt.Errorf("GET %s: body larger than %d bytes", url, maxPayBody)
	}
	return resp.StatusCode, resp.Header, body, nil
}

// offer is a requirement chosen for payment.
type offer struct {
	version       int
	network       Network
	wireNet       string          // the network as the server wrote it
	accepted      json.RawMessage // version 2: the entry, echoed verbatim
	resource      json.RawMessage // version 2: the resource object, echoed
	payTo         common.Address
	amount        certbank.USDC
	timeout       int
	domainName    string // EIP-712 domain name and version, from extra
	domainVersion string
}

// chooseOffer reads the 402's requirements in the preferred order.
func chooseOffer(header http.Header, body []byte, preferV2 bool) (offer, error) {
	var problems []string
	readers := []func() (offer, error){
		func() (offer, error) { return v1Offer(body) },
		func() (offer, error) { return v2Offer(header.Get(HeaderPaymentRequired)) },
	}
	if preferV2 {
		readers[0], readers[1] = readers[1], readers[0]
	}
	for _, read := range readers {
		o, err := read()
		if err == nil {
			return o, nil
		}
		problems = append(problems, err.Error())
	}
	return offer{}, fmt.Errorf("no payable requirement in the 402 answer: %s", strings.Join(problems, "; "))
}

func v1Offer(body []byte) (offer, error) {
	var pr struct {
		X402Version int               `json:"x402Version"`
		Accepts     []json.RawMessage `json:"accepts"`
	}
	if err := json.Unmarshal(body, &pr); err != nil || pr.X402Version != 1 {
		return offer{}, errors.New("version 1: the body is not an x402 version 1 PaymentRequirementsResponse")
	}
	var reasons []string
	for _, raw := range pr.Accepts {
		var r v1Requirement
		if err := json.Unmarshal(raw, &r); err != nil {
			reasons = append(reasons, "an entry is not a requirement")
			continue
		}
		o, err := newOffer(1, r.Scheme, r.Network, r.MaxAmountRequired, r.Asset, r.PayTo, r.MaxTimeoutSeconds, r.Extra)
		if err != nil {
			reasons = append(reasons, err.Error())
			continue
		}
		return o, nil
	}
	return offer{}, fmt.Errorf("version 1: no usable entry (%s)", strings.Join(reasons, ", "))
}

func v2Offer(headerValue string) (offer, error) {
	if headerValue == "" {
		return offer{}, errors.New("version 2: no PAYMENT-REQUIRED header")
	}
	raw, err := decodeBase64(headerValue)
	if err != nil {
		return offer{}, fmt.Errorf("version 2: PAYMENT-REQUIRED is not base64: %w", err)
	}
	var pr struct {
		X402Version int               `json:"x402Version"`
		Resource    json.RawMessage   `json:"resource"`
		Accepts     []json.RawMessage `json:"accepts"`
	}
	if err := json.Unmarshal(raw, &pr); err != nil || pr.X402Version != 2 {
		return offer{}, errors.New("version 2: PAYMENT-REQUIRED is not an x402 version 2 PaymentRequired")
	}
	var reasons []string
	for _, entry := range pr.Accepts {
		var r v2Requirement
		if err := json.Unmarshal(entry, &r); err != nil {
			reasons = append(reasons, "an entry is not a requirement")
			continue
		}
		o, err := newOffer(2, r.Scheme, r.Network, r.Amount, r.Asset, r.PayTo, r.MaxTimeoutSeconds, r.Extra)
		if err != nil {
			reasons = append(reasons, err.Error())
			continue
		}
		o.accepted, o.resource = entry, pr.Resource
		return o, nil
	}
	return offer{}, fmt.Errorf("version 2: no usable entry (%s)", strings.Join(reasons, ", "))
}

func newOffer(version int, scheme, network, amount, asset, payTo string, timeout int, extra *eip712Extra) (offer, error) {
	n, ok := LookupNetwork(network)
	switch {
	case scheme != SchemeExact:
		return offer{}, fmt.Errorf("scheme %q", scheme)
	case !ok:
		return offer{}, fmt.Errorf("unknown network %q", network)
	case !strings.EqualFold(asset, n.Asset):
		return offer{}, fmt.Errorf("asset %s is not USDC on %s", asset, n.Name)
	case !isHexAddress(payTo):
		return offer{}, fmt.Errorf("payTo %q is not an address", payTo)
	case extra == nil || extra.Name == "" || extra.Version == "":
		return offer{}, errors.New("no EIP-712 name and version in extra")
	}
	value, ok := atoi64(amount)
	if !ok || value == 0 {
		return offer{}, fmt.Errorf("amount %q", amount)
	}
	if timeout <= 0 {
		timeout = 60
	}
	return offer{
		version:       version,
		network:       n,
		wireNet:       network,
		payTo:         common.HexToAddress(payTo),
		amount:        certbank.USDC(value),
		timeout:       timeout,
		domainName:    extra.Name,
		domainVersion: extra.Version,
	}, nil
}

// sign builds and signs the payment and returns its header.
func (o offer) sign(key *ecdsa.PrivateKey, now time.Time) (name, value string, err error) {
	var nonce common.Hash
	if _, err := rand.Read(nonce[:]); err != nil {
		return "", "", fmt.Errorf("random nonce: %w", err)
	}
	a := authorization{
		from:        crypto.PubkeyToAddress(key.PublicKey),
		to:          o.payTo,
		value:       big.NewInt(int64(o.amount)),
		validAfter:  big.NewInt(now.Add(-payValidAfterSkew).Unix()),
		validBefore: big.NewInt(now.Unix() + int64(o.timeout)),
		nonce:       nonce,
	}
	// Sign with the domain the server named, as the official clients do.
	domain := o.network
	domain.TokenName, domain.TokenVersion = o.domainName, o.domainVersion
	sig, err := sign(transferDigest(domain, a), key)
	if err != nil {
		return "", "", err
	}
	payload := wireExactPayload{
		Signature: "0x" + hex.EncodeToString(sig),
		Authorization: wireAuthorization{
			From:        a.from.Hex(),
			To:          a.to.Hex(),
			Value:       a.value.String(),
			ValidAfter:  a.validAfter.String(),
			ValidBefore: a.validBefore.String(),
			Nonce:       nonce.Hex(),
		},
	}
	var v any
	if o.version == 2 {
		v = struct {
			X402Version int              `json:"x402Version"`
			Resource    json.RawMessage  `json:"resource,omitempty"`
			Accepted    json.RawMessage  `json:"accepted"`
			Payload     wireExactPayload `json:"payload"`
		}{2, o.resource, o.accepted, payload}
		name = HeaderPaymentSignature
	} else {
		v = struct {
			X402Version int              `json:"x402Version"`
			Scheme      string           `json:"scheme"`
			Network     string           `json:"network"`
			Payload     wireExactPayload `json:"payload"`
		}{1, SchemeExact, o.wireNet, payload}
		name = HeaderPayment
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", "", fmt.Errorf("encode payment: %w", err)
	}
	return name, base64.StdEncoding.EncodeToString(b), nil
}
