package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall"
	"github.com/certbank/certbank/paywall/x402"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// payFlags choose how the pay-per-request route settles. Secrets come only
// from the environment.
type payFlags struct {
	chainRPC    string // JSON-RPC endpoint; relayer key from CERTBANK_RELAYER_KEY
	facilitator string // remote facilitator URL; optional token from CERTBANK_FACILITATOR_TOKEN
	devRPCAddr  string // expose the development chain's JSON-RPC on loopback
	devWallets  int
	payTo       string // the payee, overriding site.yaml's payment.pay_to
	quiet       bool
}

func (a *app) addPayFlags(f *pflag.FlagSet, p *payFlags) {
	f.StringVar(&p.chainRPC, "chain-rpc", a.envDefault("CERTBANK_CHAIN_RPC", ""), "settle on this JSON-RPC endpoint (Base or Base Sepolia) with the relayer key in CERTBANK_RELAYER_KEY (env CERTBANK_CHAIN_RPC)")
	f.StringVar(&p.facilitator, "facilitator", a.envDefault("CERTBANK_FACILITATOR", ""), "verify and settle through this x402 facilitator URL; bearer token from CERTBANK_FACILITATOR_TOKEN (env CERTBANK_FACILITATOR)")
	f.StringVar(&p.devRPCAddr, "dev-rpc-addr", a.envDefault("CERTBANK_DEV_RPC_ADDR", ""), "serve the development chain's JSON-RPC on this loopback address, e.g. 127.0.0.1:8545 (env CERTBANK_DEV_RPC_ADDR)")
	f.StringVar(&p.payTo, "pay-to", a.envDefault("CERTBANK_PAY_TO", ""), "the address you are paid to, overriding site.yaml's payment.pay_to (env CERTBANK_PAY_TO)")
	devWallets, _ := strconv.Atoi(a.envDefault("CERTBANK_DEV_WALLETS", "10"))
	f.IntVar(&p.devWallets, "dev-wallets", devWallets, "number of funded development wallets (env CERTBANK_DEV_WALLETS)")
}

// payConfig builds the settlement backend: a remote facilitator, a JSON-RPC
// chain, or (the default) the embedded development chain.
func (a *app) payConfig(ctx context.Context, p payFlags, bank *certbank.Bank, log *slog.Logger) (*paywall.PayConfig, func(), error) {
	network := bank.Site.Payment.Network
	switch {
	case p.facilitator != "" && p.chainRPC != "":
		return nil, nil, usagef("give --facilitator or --chain-rpc, not both")
	case p.facilitator != "":
		fc := &x402.FacilitatorClient{URL: strings.TrimRight(p.facilitator, "/"), HTTPClient: &http.Client{Timeout: 90 * time.Second}}
		if tok := a.getenv("CERTBANK_FACILITATOR_TOKEN"); tok != "" {
			fc.Header = http.Header{"Authorization": []string{"Bearer " + tok}}
		}
		log.Info("payments settle through a facilitator", "url", fc.URL, "network", network)
		return &paywall.PayConfig{Facilitator: fc}, func() {}, nil
	case p.chainRPC != "":
		key := a.getenv("CERTBANK_RELAYER_KEY")
		if key == "" {
			return nil, nil, usagef("--chain-rpc needs the relayer's private key in the environment variable CERTBANK_RELAYER_KEY")
		}
		rs, err := x402.NewRPCSettler(ctx, x402.RPCConfig{URL: p.chainRPC, RelayerKey: key, Network: network})
		if err != nil {
			return nil, nil, fmt.Errorf("connect to %s: %w", redact(p.chainRPC), err)
		}
		log.Info("payments settle on a JSON-RPC chain", "network", network)
		return &paywall.PayConfig{Facilitator: x402.NewLocal(rs), Reconciler: rs}, rs.Close, nil
	}
	dc, err := x402.NewDevChain(ctx, x402.DevChainConfig{Network: network, Wallets: p.devWallets, RPCAddr: p.devRPCAddr})
	if err != nil {
		return nil, nil, fmt.Errorf("start the development chain (payment network %q; use --chain-rpc or --facilitator for a real chain): %w", network, err)
	}
	if !p.quiet {
		fmt.Fprintln(a.stderr, "================================================================================")
		fmt.Fprintf(a.stderr, " DEVELOPMENT ONLY: payments settle on an in-process simulated chain that presents\n")
		fmt.Fprintf(a.stderr, " itself as %s (chain id %d) with test USDC: nothing it signs is worth anything\n", x402.DevNetwork, x402.DevNetworkChainID)
		fmt.Fprintln(a.stderr, " on a mainnet. These keys are PUBLIC (derived from certbank's published")
		fmt.Fprintln(a.stderr, " development seed). Never send real funds to them.")
		for i := 0; i < min(p.devWallets, 3); i++ {
			addr, key := x402.DevWallet(i)
			fmt.Fprintf(a.stderr, "   dev wallet %d  %s  key %s\n", i, addr, key)
		}
		if p.devWallets > 3 {
			fmt.Fprintf(a.stderr, "   … and %d more: certbank pay --dev-wallet N\n", p.devWallets-3)
		}
		if rpc := dc.RPCURL(); rpc != "" {
			fmt.Fprintf(a.stderr, "   JSON-RPC: %s\n", rpc)
		}
		fmt.Fprintln(a.stderr, "================================================================================")
	}
	return &paywall.PayConfig{Facilitator: x402.NewLocal(dc), Reconciler: dc}, func() { dc.Close() }, nil
}

// newPayCmd builds "certbank pay URL": a client that pays for a resource.
// payOptions are the flags and argument of "certbank pay".
type payOptions struct {
	url       string
	keyHex    string
	devWallet int
	maxUSDC   string
	v1, raw   bool
}

func (a *app) newPayCmd() *cobra.Command {
	o := &payOptions{}
	cmd := &cobra.Command{
		Use:   "pay URL",
		Short: "Pay for a pay-per-request URL with x402 and print the questions",
		Long: `Requests URL, reads the 402 payment requirements, signs an EIP-3009 USDC
authorization for the exact price (at most --max), retries with it, and prints the
questions, the amount paid and the transaction hash. The key comes from --key, from
CERTBANK_PAYER_KEY, or --dev-wallet N picks a public development wallet (development
chain only).`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.url = args[0]
			return a.runPay(c.Context(), &http.Client{Timeout: 90 * time.Second}, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.keyHex, "key", "", "payer's private key, hex (prefer CERTBANK_PAYER_KEY)")
	f.IntVar(&o.devWallet, "dev-wallet", -1, "pay from development wallet N (public keys; development chain only)")
	f.StringVar(&o.maxUSDC, "max", "0.05", "refuse to pay more than this many USDC")
	f.BoolVar(&o.v1, "v1", false, "pay with x402 version 1 (X-PAYMENT) instead of version 2")
	f.BoolVar(&o.raw, "json", false, "print the response body as JSON")
	return cmd
}

// runPay pays for o.url with client and prints what it bought.
func (a *app) runPay(ctx context.Context, client *http.Client, o *payOptions) error {
	max, err := parseUSDC(o.maxUSDC)
	if err != nil {
		return err
	}
	key := o.keyHex
	if key == "" {
		key = a.getenv("CERTBANK_PAYER_KEY")
	}
	if o.devWallet >= 0 {
		if key != "" {
			return usagef("give --key or --dev-wallet, not both")
		}
		_, key = x402.DevWallet(o.devWallet)
	}
	if key == "" {
		return usagef("no payer key: pass --key HEX, set CERTBANK_PAYER_KEY, or use --dev-wallet N against a development server")
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	res, err := x402.Pay(ctx, client, o.url, key, max, !o.v1)
	if err != nil {
		return err
	}
	if res.Status != http.StatusOK {
		return fmt.Errorf("the server answered %d: %s", res.Status, strings.TrimSpace(string(res.Body)))
	}
	if o.raw {
		a.stdout.Write(res.Body)
	} else {
		printPaid(a, res.Body)
	}
	if res.Settlement != nil {
		fmt.Fprintf(a.stdout, "\npaid %s USDC (x402 v%d) from %s\ntransaction %s on %s\n", res.Amount, res.Version, res.Settlement.Payer, res.Settlement.Transaction, res.Settlement.Network)
	}
	return nil
}

// parseUSDC parses a decimal USDC amount such as "0.05".
func parseUSDC(s string) (certbank.USDC, error) {
	whole, frac, _ := strings.Cut(strings.TrimSpace(s), ".")
	if len(frac) > 6 {
		return 0, usagef("--max %q has more than 6 decimals", s)
	}
	w, err1 := strconv.ParseInt(whole, 10, 64)
	f, err2 := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	if err1 != nil || err2 != nil || w < 0 {
		return 0, usagef("--max %q must be a USDC amount like 0.05", s)
	}
	return certbank.USDC(w*1e6 + f), nil
}

func printPaid(a *app, body []byte) {
	var doc struct {
		Meta      map[string]any `json:"meta"`
		Questions []struct {
			ID, Question, Difficulty, Domain string
			Options                          map[string]string
			Answer, Explanation              *string
		} `json:"questions"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		a.stdout.Write(body)
		return
	}
	for i, q := range doc.Questions {
		fmt.Fprintf(a.stdout, "%d. [%s · %s] %s\n", i+1, q.Domain, q.Difficulty, q.Question)
		for _, l := range []string{"A", "B", "C", "D"} {
			fmt.Fprintf(a.stdout, "   %s. %s\n", l, q.Options[l])
		}
		if q.Answer != nil {
			fmt.Fprintf(a.stdout, "   Answer: %s. %s\n", *q.Answer, *q.Explanation)
		}
		fmt.Fprintln(a.stdout)
	}
	fmt.Fprintf(a.stdout, "%d questions for %v, price %v USDC\n", len(doc.Questions), doc.Meta["certification"], doc.Meta["price_paid_usdc"])
}
