package x402

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

func TestVerifyOffline(t *testing.T) {
	// The production network: what a mainnet instance verifies.
	req := testRequirement()
	req.Network = "base"
	payer, key := DevWallet(0)
	_, otherKey := DevWallet(1)
	now := time.Now()
	unix := now.Unix()

	tests := []struct {
		name    string
		version int
		edit    func(*authorization) // before signing
		after   func(*Payment)       // after signing and decoding
		reason  string               // "" means valid
	}{
		{name: "v1 valid", version: 1},
		{name: "v2 valid", version: 2},
		{name: "v1 alias base-mainnet", version: 1, after: func(p *Payment) { p.Network = "base-mainnet" }},
		{name: "validBefore exactly now+6", version: 1, edit: func(a *authorization) { a.validBefore = big.NewInt(unix + 6) }},
		{name: "validAfter exactly now", version: 1, edit: func(a *authorization) { a.validAfter = big.NewInt(unix) }},
		{name: "v of 0 or 1", version: 1, after: func(p *Payment) { p.Signature[64] -= 27 }},

		{name: "unknown scheme", version: 1, after: func(p *Payment) { p.Scheme = "upto" }, reason: ReasonScheme},
		{name: "v2 unknown scheme", version: 2, after: func(p *Payment) { p.Accepted.Scheme = "upto"; p.Scheme = "upto" }, reason: ReasonScheme},
		{name: "wrong network", version: 1, after: func(p *Payment) { p.Network = "base-sepolia" }, reason: ReasonNetworkMismatch},
		{name: "v2 wrong network", version: 2, after: func(p *Payment) { p.Network = "eip155:84532"; p.Accepted.Network = "eip155:84532" }, reason: ReasonNetworkMismatch},
		{name: "v2 wrong asset", version: 2, after: func(p *Payment) { p.Accepted.Asset = "0x036CbD53842c5426634e7929541eC2318f3dCF7e" }, reason: ReasonInvalidRequirements},
		{name: "v2 accepted other payee", version: 2, after: func(p *Payment) { p.Accepted.PayTo = payer }, reason: ReasonRecipientMismatch},
		{name: "v2 accepted other amount", version: 2, after: func(p *Payment) { p.Accepted.Amount = "7000" }, reason: ReasonValueMismatch},
		{name: "v2 accepted other timeout", version: 2, after: func(p *Payment) { p.Accepted.MaxTimeoutSeconds = 3600 }, reason: ReasonInvalidRequirements},
		{name: "v2 accepted without extra", version: 2, after: func(p *Payment) { p.Accepted.HasDomain = false }, reason: ReasonMissingDomain},
		{name: "v2 accepted wrong token name", version: 2, after: func(p *Payment) { p.Accepted.Name = "USDC" }, reason: ReasonTokenNameMismatch},
		{name: "v2 accepted wrong token version", version: 2, after: func(p *Payment) { p.Accepted.Version = "1" }, reason: ReasonTokenVersionMismatch},
		{name: "wrong payee", version: 1, edit: func(a *authorization) { a.to = common.HexToAddress(payer) }, reason: ReasonRecipientMismatch},
		{name: "value too low", version: 1, edit: func(a *authorization) { a.value = big.NewInt(9999) }, reason: ReasonValueMismatch},
		{name: "value too high", version: 2, edit: func(a *authorization) { a.value = big.NewInt(10001) }, reason: ReasonValueMismatch},
		{name: "validBefore in the past", version: 1, edit: func(a *authorization) { a.validBefore = big.NewInt(unix - 1) }, reason: ReasonValidBefore},
		{name: "validBefore too close", version: 1, edit: func(a *authorization) { a.validBefore = big.NewInt(unix + 5) }, reason: ReasonValidBefore},
		{name: "validAfter in the future", version: 1, edit: func(a *authorization) { a.validAfter = big.NewInt(unix + 1) }, reason: ReasonValidAfter},
		{name: "bad signature", version: 1, after: func(p *Payment) { p.Signature[10] ^= 0xff }, reason: ReasonSignature},
		{name: "signed by someone other than from", version: 1, edit: func(a *authorization) {
			a.from = crypto.PubkeyToAddress(mustKey(t, otherKey).PublicKey)
		}, reason: ReasonSignature},
		{name: "claims another payer", version: 2, after: func(p *Payment) {
			other, _ := DevWallet(1)
			p.Authorization.From = other
		}, reason: ReasonSignature},
		{name: "high s", version: 1, after: func(p *Payment) { p.Signature = highS(p.Signature) }, reason: ReasonSignature},
		{name: "smart-wallet signature", version: 1, after: func(p *Payment) {
			p.Signature = append(p.Signature, make([]byte, 96)...)
		}, reason: ReasonSignature},
		{name: "short signature", version: 1, after: func(p *Payment) { p.Signature = p.Signature[:64] }, reason: ReasonSignature},
		{name: "v of 29", version: 1, after: func(p *Payment) { p.Signature[64] = 29 }, reason: ReasonSignature},
		{name: "value changed after signing", version: 1, after: func(p *Payment) {
			p.Authorization.Value = big.NewInt(10000)
			p.Authorization.ValidBefore.Add(p.Authorization.ValidBefore, big.NewInt(1))
		}, reason: ReasonSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := makePayment(t, tt.version, req, key, tt.edit)
			if tt.after != nil {
				tt.after(p)
			}
			got, err := VerifyOffline(p, req, now)
			if tt.reason != "" {
				wantReason(t, err, tt.reason)
				return
			}
			if err != nil {
				t.Fatalf("VerifyOffline: %v", err)
			}
			if got != payer {
				t.Fatalf("payer = %s, want %s", got, payer)
			}
		})
	}
}

// TestVerifyWrongDomain pins the per-chain EIP-712 name pitfall: Base mainnet
// USDC signs as "USD Coin"; a payment signed with Base Sepolia's "USDC", for
// another chain or for another token contract must not verify.
func TestVerifyWrongDomain(t *testing.T) {
	req := testRequirement()
	_, keyHex := DevWallet(0)
	key := mustKey(t, keyHex)
	base, _ := LookupNetwork("base")
	wrongName, wrongChain, wrongAsset := base, base, base
	wrongName.TokenName = "USDC"
	wrongChain.ChainID = 84532
	wrongAsset.Asset = "0x036CbD53842c5426634e7929541eC2318f3dCF7e" // a version 1 payload names no asset: only the signature does
	for _, n := range []Network{wrongName, wrongChain, wrongAsset} {
		now := time.Now().Unix()
		a := authorization{
			from: crypto.PubkeyToAddress(key.PublicKey), to: common.HexToAddress(req.PayTo), value: big.NewInt(10000),
			validAfter: big.NewInt(now - 600), validBefore: big.NewInt(now + 300), nonce: randomNonce(t),
		}
		sig, err := sign(transferDigest(n, a), key)
		if err != nil {
			t.Fatal(err)
		}
		_, err = VerifyOffline(paymentFor(t, 1, req, a, sig), req, time.Now())
		wantReason(t, err, ReasonSignature)
	}
}

func TestVerifySmartWalletMessage(t *testing.T) {
	req := testRequirement()
	_, key := DevWallet(0)
	p := makePayment(t, 1, req, key, nil)
	p.Signature = append(p.Signature, make([]byte, 100)...)
	_, err := VerifyOffline(p, req, time.Now())
	if err == nil || !strings.Contains(err.(*Error).Message, "smart-wallet signatures are not supported yet") {
		t.Fatalf("err = %v", err)
	}
}

// highS returns the other, malleable form of a signature: s' = n - s with v
// flipped. It recovers to the same signer.
func highS(sig []byte) []byte {
	out := append([]byte{}, sig...)
	n := crypto.S256().Params().N
	s := new(big.Int).Sub(n, new(big.Int).SetBytes(sig[32:64]))
	s.FillBytes(out[32:64])
	if out[64] == 27 {
		out[64] = 28
	} else {
		out[64] = 27
	}
	return out
}

// fakeChain is a ChainState with fixed answers.
type fakeChain struct {
	used    bool
	balance *big.Int
	err     error
}

func (f fakeChain) AuthorizationUsed(context.Context, string, string) (bool, error) {
	return f.used, f.err
}

func (f fakeChain) BalanceOf(context.Context, string) (*big.Int, error) {
	return f.balance, f.err
}

func TestVerifierChainChecks(t *testing.T) {
	req := testRequirement()
	_, key := DevWallet(0)
	tests := []struct {
		name   string
		chain  fakeChain
		reason string
		code   certbank.Code
	}{
		{"valid", fakeChain{balance: big.NewInt(10000)}, "", ""},
		{"nonce already used", fakeChain{used: true, balance: big.NewInt(1e9)}, ReasonNonceUsed, certbank.PaymentRequired},
		{"insufficient balance", fakeChain{balance: big.NewInt(9999)}, ReasonInsufficientBalance, certbank.PaymentRequired},
		{"chain down", fakeChain{err: errors.New("dial tcp 127.0.0.1:1: connection refused")}, ReasonUnexpectedVerify, certbank.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Verifier{Chain: tt.chain}
			_, err := v.Verify(context.Background(), makePayment(t, 1, req, key, nil), req)
			if tt.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantReason(t, err, tt.reason)
			if got := certbank.ErrorCode(err); got != tt.code {
				t.Errorf("certbank.ErrorCode = %s, want %s", got, tt.code)
			}
			if msg := certbank.ErrorMessage(err); strings.Contains(msg, "127.0.0.1") || msg == "" {
				t.Errorf("client message %q leaks the cause or is empty", msg)
			}
		})
	}
}

func TestVerifierClock(t *testing.T) {
	req := testRequirement()
	_, key := DevWallet(0)
	p := makePayment(t, 1, req, key, nil)
	v := Verifier{Chain: fakeChain{balance: big.NewInt(1e9)}, Now: func() time.Time { return time.Now().Add(time.Hour) }}
	_, err := v.Verify(context.Background(), p, req)
	wantReason(t, err, ReasonValidBefore)
}
