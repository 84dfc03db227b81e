package x402

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// methodOf finds an overload of the token ABI by name and arity.
func methodOf(t *testing.T, name string, arity int) abi.Method {
	t.Helper()
	for _, m := range tokenABI(t).Methods {
		if m.RawName == name && len(m.Inputs) == arity {
			return m
		}
	}
	t.Fatalf("no %s with %d inputs", name, arity)
	return abi.Method{}
}

func wantRevert(t *testing.T, err error, reason string) {
	t.Helper()
	var rev *revertError
	if !errors.As(err, &rev) || !strings.Contains(rev.reason, reason) {
		t.Fatalf("err = %v, want a revert with %q", err, reason)
	}
}

// TestTokenContract exercises TestUSDC paths that settlement does not use:
// the ERC-7598 bytes overload, receiveWithAuthorization and the token's own
// signature checks.
func TestTokenContract(t *testing.T) {
	d := newDevChain(t, DevChainConfig{})
	ctx := context.Background()
	req := testRequirement()
	payer, key := DevWallet(0)
	transferBytes := methodOf(t, "transferWithAuthorization", 7)
	args := func(p *Payment) []any {
		a := p.Authorization.parsed()
		return []any{a.from, a.to, a.value, a.validAfter, a.validBefore, [32]byte(a.nonce)}
	}

	t.Run("bytes overload", func(t *testing.T) {
		before := balance(t, d, testPayTo)
		for _, zeroV := range []bool{false, true} {
			p := makePayment(t, 1, req, key, nil)
			sig := append([]byte{}, p.Signature...)
			if zeroV {
				sig[64] -= 27 // the overload accepts v as 0 or 1 too
			}
			if _, err := d.relayer.transact(ctx, pack(transferBytes, append(args(p), sig)...)); err != nil {
				t.Fatal(err)
			}
		}
		if got := balance(t, d, testPayTo); got != before+20000 {
			t.Fatalf("payee balance = %d, want %d", got, before+20000)
		}
	})

	t.Run("bytes overload refuses a smart-wallet signature", func(t *testing.T) {
		p := makePayment(t, 1, req, key, nil)
		_, err := d.relayer.send(ctx, pack(transferBytes, append(args(p), append(p.Signature, 0))...))
		wantRevert(t, err, "FiatTokenV2: invalid signature")
	})

	t.Run("high s", func(t *testing.T) {
		p := makePayment(t, 1, req, key, nil)
		_, err := d.relayer.send(ctx, d.relayer.token.packTransfer(p.Authorization.parsed(), highS(p.Signature)))
		wantRevert(t, err, "ECRecover: invalid signature 's' value")
	})

	t.Run("not yet valid", func(t *testing.T) {
		p := makePayment(t, 1, req, key, func(a *authorization) { a.validAfter = new(big.Int).Add(a.validBefore, big.NewInt(-1)) })
		_, err := d.relayer.send(ctx, d.relayer.token.packTransfer(p.Authorization.parsed(), p.Signature))
		wantRevert(t, err, "authorization is not yet valid")
	})

	t.Run("receiveWithAuthorization", func(t *testing.T) {
		receive := methodOf(t, "receiveWithAuthorization", 9)
		receiveTypeHash := crypto.Keccak256Hash([]byte("ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"))
		// The payee submits; here the payee is development wallet 3.
		payeeAddr, payeeKey := DevWallet(3)
		payee := newRelayer(d.client, d, d.Network(), d.relayer.token, mustKey(t, payeeKey), 1000)
		r := req
		r.PayTo = payeeAddr
		p := makePayment(t, 1, r, key, nil)
		a := p.Authorization.parsed()
		var buf [7 * 32]byte
		copy(buf[0:], receiveTypeHash[:])
		copy(buf[32+12:], a.from[:])
		copy(buf[64+12:], a.to[:])
		a.value.FillBytes(buf[96:128])
		a.validAfter.FillBytes(buf[128:160])
		a.validBefore.FillBytes(buf[160:192])
		copy(buf[192:], a.nonce[:])
		sig, err := sign(typedDataDigest(domainSeparator(d.Network()), crypto.Keccak256Hash(buf[:])), mustKey(t, key))
		if err != nil {
			t.Fatal(err)
		}
		v, rr, ss := splitSignature(sig)
		data := pack(receive, a.from, a.to, a.value, a.validAfter, a.validBefore, [32]byte(a.nonce), v, rr, ss)

		before := balance(t, d, payeeAddr)
		_, err = d.relayer.send(ctx, data) // not the payee
		wantRevert(t, err, "caller must be the payee")
		if _, err := payee.transact(ctx, data); err != nil {
			t.Fatal(err)
		}
		if got := balance(t, d, payeeAddr); got != before+10000 {
			t.Fatalf("payee balance = %d, want %d", got, before+10000)
		}
		used, err := d.AuthorizationUsed(ctx, payer, p.Authorization.Nonce)
		if err != nil || !used {
			t.Fatalf("authorizationState = %v, %v", used, err)
		}
	})

	t.Run("only the minter mints", func(t *testing.T) {
		_, walletKey := DevWallet(1)
		other := newRelayer(d.client, d, d.Network(), d.relayer.token, mustKey(t, walletKey), 1000)
		_, err := other.send(ctx, d.relayer.token.packMint(common.HexToAddress(payer), big.NewInt(1)))
		wantRevert(t, err, "caller is not a minter")
	})
}
