package x402

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/certbank/certbank"
)

// newRPCPair starts a development chain serving JSON-RPC on a loopback port
// and an RPCSettler on it whose relayer is development wallet 3.
// newRPCPair starts a development chain and an RPC settler that settles
// through its JSON-RPC. Without automine, what the settler sends waits for
// the test's Commit (or the dev chain's own next block), as on a slow chain.
func newRPCPair(t *testing.T, receiptTimeout time.Duration, automine bool) (*DevChain, *RPCSettler) {
	t.Helper()
	d := newDevChain(t, DevChainConfig{RPCAddr: "127.0.0.1:0", NoAutomine: !automine})
	if url := d.RPCURL(); !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("RPCURL = %q", url)
	}
	_, relayerKey := DevWallet(3)
	s, err := NewRPCSettler(context.Background(), RPCConfig{
		URL:            d.RPCURL(),
		RelayerKey:     relayerKey,
		Network:        DevNetwork,
		ReceiptTimeout: receiptTimeout,
		PollInterval:   10 * time.Millisecond,
		RequestTimeout: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return d, s
}

func TestRPCSettler(t *testing.T) {
	// A second instance settling through the development chain's JSON-RPC:
	// automining confirms its transactions at once.
	d, s := newRPCPair(t, 5*time.Second, true)
	ctx := context.Background()
	req := testRequirement()
	local := NewLocal(s)
	payer, key := DevWallet(0)
	start := balance(t, s, payer)

	for i, version := range []int{1, 2} {
		p := makePayment(t, version, req, key, nil)
		if _, err := local.Verify(ctx, p, req); err != nil {
			t.Fatalf("v%d Verify: %v", version, err)
		}
		st, err := local.Settle(ctx, p, req)
		if err != nil {
			t.Fatalf("v%d Settle: %v", version, err)
		}
		if st.Pending || st.Payer != payer || st.Network != DevNetwork {
			t.Fatalf("settlement = %+v", st)
		}
		if got, want := balance(t, s, payer), start-int64(i+1)*10000; got != want {
			t.Errorf("payer balance = %d, want %d", got, want)
		}
		_, err = local.Verify(ctx, p, req)
		wantReason(t, err, ReasonNonceUsed)
	}

	// A payment settled by someone else (the dev chain's own relayer) is
	// found through its AuthorizationUsed log.
	p := makePayment(t, 1, req, key, nil)
	other, err := d.Settle(ctx, p, req)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Reconcile(ctx, p.Authorization.From, p.Authorization.Nonce)
	if err != nil || r.Pending || r.Transaction != other.Transaction {
		t.Fatalf("Reconcile = %+v, %v; want transaction %s", r, err, other.Transaction)
	}
}

func TestRPCSettlerPendingAndReconcile(t *testing.T) {
	d, s := newRPCPair(t, 100*time.Millisecond, false) // nothing mines until Commit
	ctx := context.Background()
	req := testRequirement()
	payer, key := DevWallet(1)
	before := balance(t, s, payer)
	p := makePayment(t, 2, req, key, nil)

	st, err := s.Settle(ctx, p, req)
	wantReason(t, err, ReasonSettlementPending)
	if !st.Pending || len(st.Transaction) != 66 || st.Payer != payer {
		t.Fatalf("pending settlement = %+v", st)
	}
	if certbank.ErrorCode(err) != certbank.Unavailable {
		t.Errorf("code = %s, want %s", certbank.ErrorCode(err), certbank.Unavailable)
	}

	r, err := s.Reconcile(ctx, p.Authorization.From, p.Authorization.Nonce)
	wantReason(t, err, ReasonSettlementPending)
	if !r.Pending || r.Transaction != st.Transaction {
		t.Fatalf("Reconcile before mining = %+v", r)
	}

	// An identical retry reconciles instead of broadcasting again.
	again, err := s.Settle(ctx, p, req)
	wantReason(t, err, ReasonSettlementPending)
	if again.Transaction != st.Transaction {
		t.Fatalf("retry sent %s, first was %s", again.Transaction, st.Transaction)
	}

	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	r, err = s.Reconcile(ctx, p.Authorization.From, p.Authorization.Nonce)
	if err != nil || r.Pending || r.Transaction != st.Transaction || r.Payer != payer {
		t.Fatalf("Reconcile after mining = %+v, %v", r, err)
	}
	if got := balance(t, s, payer); got != before-10000 {
		t.Errorf("payer balance = %d, want %d (charged exactly once)", got, before-10000)
	}
	_, err = NewLocal(s).Verify(ctx, p, req)
	wantReason(t, err, ReasonNonceUsed)

	// Never seen and never used: pending until validBefore passes.
	fresh := makePayment(t, 1, req, key, nil)
	r, err = s.Reconcile(ctx, fresh.Authorization.From, fresh.Authorization.Nonce)
	wantReason(t, err, ReasonSettlementPending)
	if !r.Pending || r.Transaction != "" {
		t.Fatalf("Reconcile of an unknown authorization = %+v", r)
	}
}

func TestRPCSettlerDown(t *testing.T) {
	d, s := newRPCPair(t, time.Second, false)
	ctx := context.Background()
	req := testRequirement()
	_, key := DevWallet(0)
	p := makePayment(t, 1, req, key, nil)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := NewLocal(s).Verify(ctx, p, req)
	wantReason(t, err, ReasonUnexpectedVerify)
	_, err = s.Settle(ctx, p, req)
	wantReason(t, err, ReasonUnexpectedSettle)
	if certbank.ErrorCode(err) != certbank.Unavailable {
		t.Errorf("code = %s", certbank.ErrorCode(err))
	}

	_, relayerKey := DevWallet(3)
	if _, err := NewRPCSettler(ctx, RPCConfig{URL: d.RPCURL(), RelayerKey: relayerKey, Network: DevNetwork, RequestTimeout: time.Second}); err == nil {
		t.Fatal("NewRPCSettler on a stopped endpoint succeeded")
	}
}

func TestNewRPCSettlerChecks(t *testing.T) {
	d := newDevChain(t, DevChainConfig{RPCAddr: "127.0.0.1:0"})
	_, key := DevWallet(3)
	for _, cfg := range []RPCConfig{
		{URL: d.RPCURL(), RelayerKey: key, Network: "base"}, // chain 84532 is not 8453
		{URL: d.RPCURL(), RelayerKey: key, Network: "solana"},
		{URL: d.RPCURL(), RelayerKey: "0x1234", Network: DevNetwork},
		{URL: "http://127.0.0.1:1", RelayerKey: key, Network: DevNetwork, RequestTimeout: time.Second},
	} {
		if s, err := NewRPCSettler(context.Background(), cfg); err == nil {
			s.Close()
			t.Errorf("NewRPCSettler(%+v) succeeded", cfg)
		}
	}
}
