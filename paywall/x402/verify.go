package x402

import (
	"context"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/certbank/certbank"
)

// MinValidity is how far in the future validBefore must be when a payment is
// verified, as in the official facilitators: about three Base blocks, time
// enough to settle.
const MinValidity = 6 * time.Second

// Match checks that p is a payment for r as far as the envelope goes:
// version 1 by scheme and network (the network may be any name of r's
// network, e.g. the alias base-mainnet); version 2 by comparing every field
// of p.Accepted with r. It returns an *Error naming the first difference.
func Match(p *Payment, r Requirement) error {
	want := r.network()
	if p.Scheme != SchemeExact {
		return newError(ReasonScheme, fmt.Sprintf("scheme %q is not supported; pay with scheme %q", p.Scheme, SchemeExact))
	}
	if !want.is(p.Network) {
		return newError(ReasonNetworkMismatch, fmt.Sprintf("the payment is for network %q, but this resource is paid on %s (%s)", p.Network, want.Name, want.CAIP2))
	}
	if p.Version != 2 {
		return nil
	}
	acc := p.Accepted
	if acc == nil {
		return newError(ReasonInvalidPayload, "an x402 version 2 payment needs accepted")
	}
	switch {
	case !strings.EqualFold(acc.Asset, want.Asset):
		return newError(ReasonInvalidRequirements, fmt.Sprintf("the payment accepted asset %s, but this resource is paid in %s USDC at %s", acc.Asset, want.Name, want.Asset))
	case !strings.EqualFold(acc.PayTo, r.PayTo):
		return newError(ReasonRecipientMismatch, fmt.Sprintf("the payment accepted payTo %s, but this resource is paid to %s", acc.PayTo, checksumAddress(r.PayTo)))
	case acc.Amount != r.Amount.Atomic():
		return newError(ReasonValueMismatch, fmt.Sprintf("the payment accepted amount %q, but the price is %s (%s USDC)", acc.Amount, r.Amount.Atomic(), r.Amount))
	case acc.MaxTimeoutSeconds != int64(r.MaxTimeoutSeconds):
		return newError(ReasonInvalidRequirements, fmt.Sprintf("the payment accepted maxTimeoutSeconds %d, but the requirement says %d; copy the requirement from PAYMENT-REQUIRED unchanged", acc.MaxTimeoutSeconds, r.MaxTimeoutSeconds))
	case !acc.HasDomain:
		return newError(ReasonMissingDomain, fmt.Sprintf("accepted.extra must carry the token's EIP-712 name and version (%q, %q)", want.TokenName, want.TokenVersion))
	case acc.Name != want.TokenName:
		return newError(ReasonTokenNameMismatch, fmt.Sprintf("accepted.extra.name is %q, but the token signs as %q", acc.Name, want.TokenName))
	case acc.Version != want.TokenVersion:
		return newError(ReasonTokenVersionMismatch, fmt.Sprintf("accepted.extra.version is %q, but the token's version is %q", acc.Version, want.TokenVersion))
	}
	return nil
}

// VerifyOffline runs every check that needs no chain, at time now, and
// returns the payer's EIP-55 address. In order: Match; the recipient is
// r.PayTo; the value is exactly r.Amount; validBefore is at least now +
// MinValidity; validAfter is not after now; and the EIP-712
// TransferWithAuthorization signature is a 65-byte, low-s ECDSA signature by
// authorization.from. Cheap checks come first, so junk is refused before the
// signature recovery, which is the only costly step. Failures are *Error.
func VerifyOffline(p *Payment, r Requirement, now time.Time) (payer string, err error) {
	if err := Match(p, r); err != nil {
		return "", err
	}
	n := r.network()
	a := p.Authorization.parsed()
	if !strings.EqualFold(p.Authorization.To, r.PayTo) {
		return "", newError(ReasonRecipientMismatch, fmt.Sprintf("the authorization pays %s, but this resource is paid to %s", checksumAddress(p.Authorization.To), checksumAddress(r.PayTo)))
	}
	price := big.NewInt(int64(r.Amount))
	switch a.value.Cmp(price) {
	case -1:
		return "", newError(ReasonValueMismatch, fmt.Sprintf("the authorization is for %s atomic units, less than the price of %s (%s USDC); authorize exactly the price", a.value, r.Amount.Atomic(), r.Amount))
	case 1:
		return "", newError(ReasonValueMismatch, fmt.Sprintf("the authorization is for %s atomic units, more than the price of %s (%s USDC); the exact scheme takes exactly the price", a.value, r.Amount.Atomic(), r.Amount))
	}
	unix := now.Unix()
	deadline := big.NewInt(unix + int64(MinValidity/time.Second))
	if a.validBefore.Cmp(deadline) < 0 {
		if a.validBefore.Cmp(big.NewInt(unix)) <= 0 {
			return "", newError(ReasonValidBefore, fmt.Sprintf("the authorization expired at %s (validBefore); sign a new payment", a.validBefore))
		}
		return "", newError(ReasonValidBefore, fmt.Sprintf("the authorization expires at %s, less than %d s from now (%d), too soon to settle; sign a new payment with validBefore = now + maxTimeoutSeconds", a.validBefore, int(MinValidity/time.Second), unix))
	}
	if a.validAfter.Cmp(big.NewInt(unix)) > 0 {
		return "", newError(ReasonValidAfter, fmt.Sprintf("the authorization is not valid until %s (validAfter), after now (%d); set validAfter in the past (official clients use now - 600)", a.validAfter, unix))
	}
	signer, err := recoverSigner(transferDigest(n, a), p.Signature)
	if err != nil {
		return "", err
	}
	if signer != a.from {
		return "", newError(ReasonSignature, fmt.Sprintf("the signature is not by %s, the payer in authorization.from; sign the EIP-712 TransferWithAuthorization with domain {name: %q, version: %q, chainId: %d, verifyingContract: %s}", checksumAddress(p.Authorization.From), n.TokenName, n.TokenVersion, n.ChainID, n.Asset))
	}
	return a.from.Hex(), nil
}

// ChainState is what verification needs to read from the token's chain.
// Addresses and nonces are 0x hex strings.
type ChainState interface {
	// AuthorizationUsed reports whether from has used or canceled nonce.
	AuthorizationUsed(ctx context.Context, from, nonce string) (bool, error)
	// BalanceOf returns the token balance of address in atomic units.
	BalanceOf(ctx context.Context, address string) (*big.Int, error)
}

// Verifier verifies payments completely: VerifyOffline, then the chain.
type Verifier struct {
	// Chain answers the chain checks. It must be set.
	Chain ChainState
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Verify checks p against r and returns the payer: VerifyOffline, then that
// the authorization's nonce is unused and the payer's balance covers the
// value. The two chain reads run concurrently. Failures are *Error; a chain
// that cannot be read gives ReasonUnexpectedVerify (certbank.Unavailable).
func (v *Verifier) Verify(ctx context.Context, p *Payment, r Requirement) (payer string, err error) {
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	payer, err = VerifyOffline(p, r, now())
	if err != nil {
		return "", err
	}
	a := p.Authorization
	type balance struct {
		amount *big.Int
		err    error
	}
	bal := make(chan balance, 1)
	go func() {
		b, err := v.Chain.BalanceOf(ctx, a.From)
		bal <- balance{b, err}
	}()
	used, usedErr := v.Chain.AuthorizationUsed(ctx, a.From, a.Nonce)
	b := <-bal
	if usedErr != nil {
		return "", wrapError(ReasonUnexpectedVerify, "the payment could not be checked on chain; retry the same payment in a moment", usedErr)
	}
	if used {
		return "", newError(ReasonNonceUsed, "this authorization was already used or canceled; sign a new payment with a fresh random nonce")
	}
	if b.err != nil {
		return "", wrapError(ReasonUnexpectedVerify, "the payer's balance could not be read; retry the same payment in a moment", b.err)
	}
	if b.amount.Cmp(a.Value) < 0 {
		return "", newError(ReasonInsufficientBalance, fmt.Sprintf("%s holds %s USDC, less than the price of %s USDC; fund the wallet and pay again", payer, formatUSDC(b.amount), r.Amount))
	}
	return payer, nil
}

// formatUSDC formats atomic units as a decimal USDC amount.
func formatUSDC(x *big.Int) string {
	if x.IsInt64() {
		return certbank.USDC(x.Int64()).String()
	}
	q, m := new(big.Int).QuoRem(x, big.NewInt(1e6), new(big.Int))
	frac := strings.TrimRight(fmt.Sprintf("%06d", m.Int64()), "0")
	if frac == "" {
		return q.String()
	}
	return q.String() + "." + frac
}

// atoi64 parses a non-negative decimal int64.
func atoi64(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n >= 0
}
