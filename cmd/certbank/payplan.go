package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/x402"
)

// payPlan is how a serve instance will take payments, decided before
// anything listens: the network, asset, payee and settlement backend, and
// what is unsafe about them.
type payPlan struct {
	Network     certbank.Network
	Backend     string // what settles, in words
	Dev         bool   // the embedded development chain
	PayTo       string
	PayToSource string
	Notes       []string // facts an operator should know
	Unsafe      []string // each a reason and its fix; serve refuses to start while any
}

var payToRE = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)

// planPayment decides the payment setup from the settlement flags and
// site.yaml's payment settings. It never fails: what is wrong is in Unsafe.
func planPayment(p payFlags, s *certbank.Site) payPlan {
	var pl payPlan
	n, ok := certbank.LookupNetwork(s.Payment.Network)
	if !ok {
		pl.Unsafe = append(pl.Unsafe, fmt.Sprintf("payment.network %q is not supported; use base (mainnet) or base-sepolia (test network) in site.yaml", s.Payment.Network))
	}
	pl.Network = n
	test := ok && n.ChainID == x402.DevNetworkChainID
	pl.PayTo, pl.PayToSource = s.Payment.PayTo, "site.yaml payment.pay_to"
	if p.payTo != "" {
		pl.PayTo, pl.PayToSource = p.payTo, "--pay-to / CERTBANK_PAY_TO"
	}
	switch {
	case p.facilitator != "":
		pl.Backend = "x402 facilitator " + redact(p.facilitator)
	case p.chainRPC != "":
		pl.Backend = "JSON-RPC chain " + redact(p.chainRPC) + " (relayer key from CERTBANK_RELAYER_KEY)"
	default:
		pl.Dev = true
		pl.Backend = "embedded development chain (simulated in this process; test USDC, public keys)"
	}
	if pl.Dev {
		if ok && !test {
			pl.Unsafe = append(pl.Unsafe, fmt.Sprintf(
				"payment.network is %s (chain %d), a mainnet, but no real settlement backend is given: the development chain only presents itself as the test network %s, so that nothing a development instance signs is worth anything on a mainnet. Set payment.network: %s in site.yaml for development, or give --chain-rpc or --facilitator and a payee you control to take real payments",
				n.Name, n.ChainID, x402.DevNetwork, x402.DevNetwork))
		}
		if pl.PayTo == "" {
			pl.PayTo, pl.PayToSource = x402.DevPayee(), "the development payee (no pay_to given)"
		}
		pl.Notes = append(pl.Notes, "development only: payments are test USDC on a simulated chain and worth nothing anywhere")
	} else {
		switch {
		case pl.PayTo == "":
			pl.Unsafe = append(pl.Unsafe, "no payee: a real settlement backend needs the address you are paid to; set payment.pay_to in site.yaml, or --pay-to ADDRESS (env CERTBANK_PAY_TO), to an address whose key you hold")
		case !payToRE.MatchString(pl.PayTo):
			pl.Unsafe = append(pl.Unsafe, fmt.Sprintf("payee %q is not a 0x-prefixed 20-byte hex address; set payment.pay_to or --pay-to to your address", pl.PayTo))
		default:
			// Even on the test network: a real backend moves real test
			// funds, and a payee that anyone controls is never intended.
			if what, bad := x402.WellKnown(pl.PayTo); bad {
				pl.Unsafe = append(pl.Unsafe, fmt.Sprintf("payee %s is %s: anyone could take what is paid to it. Set payment.pay_to or --pay-to to an address whose key only you hold", pl.PayTo, what))
			}
		}
		if test {
			pl.Notes = append(pl.Notes, "test network: payments are Base Sepolia test USDC, worth nothing")
		}
	}
	return pl
}

// write prints the plan for an operator.
func (pl payPlan) write(w io.Writer) {
	n := pl.Network
	fmt.Fprintf(w, "payment setup\n")
	fmt.Fprintf(w, "  network  %s (%s, chain id %d)\n", n.Name, n.CAIP2, n.ChainID)
	fmt.Fprintf(w, "  asset    USDC %s (EIP-712 domain %q, version %s)\n", n.Asset, n.TokenName, n.TokenVersion)
	fmt.Fprintf(w, "  payee    %s (%s)\n", pl.PayTo, pl.PayToSource)
	fmt.Fprintf(w, "  backend  %s\n", pl.Backend)
	for _, note := range pl.Notes {
		fmt.Fprintf(w, "  note     %s\n", note)
	}
	if len(pl.Unsafe) == 0 {
		fmt.Fprintln(w, "  safe     yes")
		return
	}
	for _, u := range pl.Unsafe {
		fmt.Fprintf(w, "  UNSAFE   %s\n", u)
	}
}

// unsafeError is the error serve returns for an unsafe plan.
func (pl payPlan) unsafeError() error {
	return usagef("refusing to start: the payment setup is unsafe:\n  - %s\n(certbank serve --check prints the whole setup)", strings.Join(pl.Unsafe, "\n  - "))
}

// buildPayee is the payee a static build advertises: --pay-to, else
// site.yaml's payment.pay_to; on the test network, the development payee
// when neither is given. A mainnet build needs a payee of the operator's
// own: none, or an address whose key is public, is refused.
func buildPayee(flag string, s *certbank.Site) (string, error) {
	payTo := s.Payment.PayTo
	if flag != "" {
		payTo = flag
	}
	n, ok := certbank.LookupNetwork(s.Payment.Network)
	if !ok {
		return "", usagef("payment.network %q is not supported; use base or base-sepolia in site.yaml", s.Payment.Network)
	}
	test := n.ChainID == x402.DevNetworkChainID
	switch {
	case payTo == "" && test:
		return x402.DevPayee(), nil
	case payTo == "":
		return "", usagef("payment.network is %s (a mainnet) but no payee is set: set payment.pay_to in site.yaml, or --pay-to ADDRESS (env CERTBANK_PAY_TO), to an address whose key you hold", n.Name)
	case !payToRE.MatchString(payTo):
		return "", usagef("payee %q is not a 0x-prefixed 20-byte hex address; set payment.pay_to or --pay-to to your address", payTo)
	}
	if what, bad := x402.WellKnown(payTo); bad && !test {
		return "", usagef("payee %s is %s: anyone could take what is paid to it. Set payment.pay_to or --pay-to to an address whose key only you hold", payTo, what)
	}
	return payTo, nil
}
