package x402

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	"github.com/certbank/certbank"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// PaymentParams shape a version 1 payment built by SignPayment. Every zero
// field takes the honest value for the requirement; setting one builds a
// payment that is wrong in exactly that way, which is how the service's
// tests exercise each refusal over HTTP.
type PaymentParams struct {
	Scheme      string        // "" means "exact"
	Network     string        // "" means the requirement's version 1 name
	To          string        // "" means the requirement's payTo
	Value       certbank.USDC // 0 means the requirement's amount
	ValidAfter  time.Time     // zero means now - 10 minutes, as the official v1 client does
	ValidBefore time.Time     // zero means now + maxTimeoutSeconds
	Nonce       string        // "" means 32 random bytes
	SignerKey   string        // "" means the payer's key; another key forges the signature
	TokenName   string        // "" means the network's EIP-712 name
	HighS       bool          // replace s by n - s (a malleated signature)
}

// SignPayment builds and signs an X-PAYMENT header value (x402 version 1)
// paying req from the account of payerKeyHex, shaped by p.
func SignPayment(payerKeyHex string, req Requirement, p PaymentParams, now time.Time) (string, error) {
	payer, err := parsePrivateKey(payerKeyHex)
	if err != nil {
		return "", err
	}
	signer := payer
	if p.SignerKey != "" {
		if signer, err = parsePrivateKey(p.SignerKey); err != nil {
			return "", err
		}
	}
	n := req.network()
	a := authorization{
		from:        crypto.PubkeyToAddress(payer.PublicKey),
		to:          common.HexToAddress(req.PayTo),
		value:       big.NewInt(int64(req.Amount)),
		validAfter:  big.NewInt(now.Add(-payValidAfterSkew).Unix()),
		validBefore: big.NewInt(now.Unix() + int64(req.MaxTimeoutSeconds)),
	}
	if p.To != "" {
		a.to = common.HexToAddress(p.To)
	}
	if p.Value != 0 {
		a.value = big.NewInt(int64(p.Value))
	}
	if !p.ValidAfter.IsZero() {
		a.validAfter = big.NewInt(p.ValidAfter.Unix())
	}
	if !p.ValidBefore.IsZero() {
		a.validBefore = big.NewInt(p.ValidBefore.Unix())
	}
	if p.Nonce != "" {
		a.nonce = common.HexToHash(p.Nonce)
	} else if _, err := rand.Read(a.nonce[:]); err != nil {
		return "", fmt.Errorf("random nonce: %w", err)
	}
	domain := n
	if p.TokenName != "" {
		domain.TokenName = p.TokenName
	}
	sig, err := sign(transferDigest(domain, a), signer)
	if err != nil {
		return "", err
	}
	if p.HighS {
		order := crypto.S256().Params().N
		s := new(big.Int).SetBytes(sig[32:64])
		s.Sub(order, s)
		s.FillBytes(sig[32:64])
		sig[64] ^= 1 // 27 <-> 28: the same signer under the flipped s
	}
	scheme, network := SchemeExact, n.Name
	if p.Scheme != "" {
		scheme = p.Scheme
	}
	if p.Network != "" {
		network = p.Network
	}
	b, err := json.Marshal(struct {
		X402Version int              `json:"x402Version"`
		Scheme      string           `json:"scheme"`
		Network     string           `json:"network"`
		Payload     wireExactPayload `json:"payload"`
	}{1, scheme, network, wireExactPayload{
		Signature: "0x" + hex.EncodeToString(sig),
		Authorization: wireAuthorization{
			From: a.from.Hex(), To: a.to.Hex(), Value: a.value.String(),
			ValidAfter: a.validAfter.String(), ValidBefore: a.validBefore.String(), Nonce: a.nonce.Hex(),
		},
	}})
	if err != nil {
		return "", fmt.Errorf("encode payment: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}
