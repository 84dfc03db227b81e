package x402

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// testPayTo is the payee of the tests' requirements.
const testPayTo = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"

func testRequirement() Requirement {
	return Requirement{
		Network:           DevNetwork,
		PayTo:             testPayTo,
		Amount:            10000,
		Resource:          "https://certbank.example/api/v1/x402?certification=cissp&limit=10",
		Description:       "10 cissp practice questions",
		MimeType:          "application/json",
		MaxTimeoutSeconds: 300,
	}
}

func mustKey(t testing.TB, hexKey string) *ecdsa.PrivateKey {
	t.Helper()
	key, err := parsePrivateKey(hexKey)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func randomNonce(t testing.TB) common.Hash {
	t.Helper()
	var n common.Hash
	if _, err := rand.Read(n[:]); err != nil {
		t.Fatal(err)
	}
	return n
}

// makePayment signs a payment of version for req with the key signerHex,
// lets edit change the authorization before signing, and returns it as
// Decode returns it from its header.
func makePayment(t testing.TB, version int, req Requirement, signerHex string, edit func(*authorization)) *Payment {
	t.Helper()
	key := mustKey(t, signerHex)
	n := req.network()
	now := time.Now().Unix()
	a := authorization{
		from:        crypto.PubkeyToAddress(key.PublicKey),
		to:          common.HexToAddress(req.PayTo),
		value:       big.NewInt(int64(req.Amount)),
		validAfter:  big.NewInt(now - 600),
		validBefore: big.NewInt(now + 300),
		nonce:       randomNonce(t),
	}
	if edit != nil {
		edit(&a)
	}
	sig, err := sign(transferDigest(n, a), key)
	if err != nil {
		t.Fatal(err)
	}
	return paymentFor(t, version, req, a, sig)
}

// paymentFor wraps an authorization and signature into a decoded Payment.
func paymentFor(t testing.TB, version int, req Requirement, a authorization, sig []byte) *Payment {
	t.Helper()
	n := req.network()
	p := &Payment{
		Version:   version,
		Scheme:    SchemeExact,
		Network:   n.wireName(version),
		Signature: sig,
		Authorization: Authorization{
			From:        a.from.Hex(),
			To:          a.to.Hex(),
			Value:       a.value,
			ValidAfter:  a.validAfter,
			ValidBefore: a.validBefore,
			Nonce:       a.nonce.Hex(),
		},
	}
	if version == 2 {
		v2 := req.v2()
		p.Accepted = &Accepted{
			Scheme: v2.Scheme, Network: v2.Network, Amount: v2.Amount, Asset: v2.Asset, PayTo: v2.PayTo,
			MaxTimeoutSeconds: int64(v2.MaxTimeoutSeconds), Name: v2.Extra.Name, Version: v2.Extra.Version, HasDomain: true,
		}
	}
	name, value := p.Header()
	decoded, err := Decode(name, value)
	if err != nil {
		t.Fatalf("Decode(own payment): %v", err)
	}
	return decoded
}

// newDevChain starts a development chain for one test.
func newDevChain(t testing.TB, cfg DevChainConfig) *DevChain {
	t.Helper()
	if cfg.Network == "" {
		cfg.Network = DevNetwork
	}
	if cfg.Wallets == 0 {
		cfg.Wallets = 4
	}
	d, err := NewDevChain(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("close dev chain: %v", err)
		}
	})
	return d
}

func wantReason(t testing.TB, err error, want string) {
	t.Helper()
	if got := ReasonOf(err); got != want {
		t.Fatalf("reason = %q (err %v), want %q", got, err, want)
	}
}

func bigInt(x int64) *big.Int { return big.NewInt(x) }
