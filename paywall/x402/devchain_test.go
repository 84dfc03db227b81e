package x402

import (
	"context"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
)

func balance(t *testing.T, c ChainState, addr string) int64 {
	t.Helper()
	b, err := c.BalanceOf(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	return b.Int64()
}

// cancel has the payer cancel the authorization of p on d.
func cancel(t *testing.T, d *DevChain, p *Payment, keyHex string) {
	t.Helper()
	key := mustKey(t, keyHex)
	from := crypto.PubkeyToAddress(key.PublicKey)
	nonce := common.HexToHash(p.Authorization.Nonce)
	sig, err := sign(cancelDigest(d.Network(), from, nonce), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.relayer.transact(context.Background(), d.relayer.token.packCancel(from, nonce, sig)); err != nil {
		t.Fatalf("cancelAuthorization: %v", err)
	}
}

func TestDevWallet(t *testing.T) {
	addr, key := DevWallet(0)
	// Pinned: the derivation is published, so it must never change.
	if addr != "0x582CF17AFF1B782263b8a85706C10b8dFdD9A600" {
		t.Errorf("DevWallet(0) = %s", addr)
	}
	if got := crypto.PubkeyToAddress(mustKey(t, key).PublicKey).Hex(); got != addr {
		t.Errorf("key of DevWallet(0) is for %s", got)
	}
	if a1, _ := DevWallet(1); a1 == addr {
		t.Error("DevWallet(1) == DevWallet(0)")
	}
	if a, k := DevWallet(0); a != addr || k != key {
		t.Error("DevWallet is not deterministic")
	}
}

func TestNewDevChainRefuses(t *testing.T) {
	for _, cfg := range []DevChainConfig{
		{},
		{Network: "base"}, // never a mainnet's identity
		{Network: "base-mainnet"},
		{Network: "eip155:8453"},
		{Network: "eip155:1"},
		{Network: DevNetwork, RPCAddr: "0.0.0.0:0"},
		{Network: DevNetwork, RPCAddr: "192.168.1.10:8545"},
		{Network: DevNetwork, Wallets: -1},
		{Network: DevNetwork, WalletBalance: -1},
	} {
		if d, err := NewDevChain(context.Background(), cfg); err == nil {
			d.Close()
			t.Errorf("NewDevChain(%+v) succeeded", cfg)
		}
	}
}

func TestDevChainSettleRoundTrip(t *testing.T) {
	d := newDevChain(t, DevChainConfig{Network: "eip155:84532", WalletBalance: 5 * 1e6})
	ctx := context.Background()
	req := testRequirement()
	local := NewLocal(d)
	payer, key := DevWallet(0)
	if got := balance(t, d, payer); got != 5e6 {
		t.Fatalf("funded balance = %d, want 5000000", got)
	}
	for i, version := range []int{1, 2} {
		p := makePayment(t, version, req, key, nil)
		gotPayer, err := local.Verify(ctx, p, req)
		if err != nil || gotPayer != payer {
			t.Fatalf("v%d Verify = %s, %v", version, gotPayer, err)
		}
		s, err := local.Settle(ctx, p, req)
		if err != nil {
			t.Fatalf("v%d Settle: %v", version, err)
		}
		if s.Pending || s.Payer != payer || s.Network != DevNetwork || len(s.Transaction) != 66 {
			t.Fatalf("v%d settlement = %+v", version, s)
		}
		paid := int64(i+1) * 10000
		if got := balance(t, d, payer); got != 5e6-paid {
			t.Errorf("payer balance = %d, want %d", got, 5e6-paid)
		}
		if got := balance(t, d, testPayTo); got != paid {
			t.Errorf("payee balance = %d, want %d", got, paid)
		}
		used, err := d.AuthorizationUsed(ctx, p.Authorization.From, p.Authorization.Nonce)
		if err != nil || !used {
			t.Errorf("authorizationState = %v, %v", used, err)
		}
		// Settled payments reconcile as paid, with their transaction.
		r, err := d.Reconcile(ctx, p.Authorization.From, p.Authorization.Nonce)
		if err != nil || r.Transaction != s.Transaction || r.Pending {
			t.Errorf("Reconcile = %+v, %v; want transaction %s", r, err, s.Transaction)
		}
	}
}

func TestDevChainMint(t *testing.T) {
	d := newDevChain(t, DevChainConfig{Wallets: 1})
	addr := "0x00000000000000000000000000000000000000aa"
	if err := d.Mint(context.Background(), addr, 42*1e6); err != nil {
		t.Fatal(err)
	}
	if got := balance(t, d, addr); got != 42e6 {
		t.Fatalf("balance = %d", got)
	}
	if err := d.Mint(context.Background(), "nope", 1); err == nil {
		t.Fatal("Mint to a bad address succeeded")
	}
	if err := d.Mint(context.Background(), addr, -1); err == nil {
		t.Fatal("Mint of a negative amount succeeded")
	}
}

func TestDevChainFailures(t *testing.T) {
	d := newDevChain(t, DevChainConfig{})
	ctx := context.Background()
	req := testRequirement()
	local := NewLocal(d)
	payer, key := DevWallet(0)

	t.Run("reused nonce", func(t *testing.T) {
		p := makePayment(t, 1, req, key, nil)
		if _, err := local.Settle(ctx, p, req); err != nil {
			t.Fatal(err)
		}
		_, err := local.Verify(ctx, p, req)
		wantReason(t, err, ReasonNonceUsed)
		before := balance(t, d, payer)
		_, err = local.Settle(ctx, p, req)
		wantReason(t, err, ReasonTransactionFailed)
		if got := balance(t, d, payer); got != before {
			t.Errorf("balance moved from %d to %d", before, got)
		}
	})

	t.Run("insufficient balance", func(t *testing.T) {
		key, err := crypto.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		p := makePayment(t, 2, req, formatPrivateKey(key), nil)
		_, err = local.Verify(ctx, p, req)
		wantReason(t, err, ReasonInsufficientBalance)
		_, err = local.Settle(ctx, p, req)
		wantReason(t, err, ReasonTransactionFailed)
	})

	t.Run("canceled before settle", func(t *testing.T) {
		p := makePayment(t, 1, req, key, nil)
		if _, err := local.Verify(ctx, p, req); err != nil {
			t.Fatal(err)
		}
		cancel(t, d, p, key)
		before := balance(t, d, payer)
		_, err := local.Settle(ctx, p, req)
		wantReason(t, err, ReasonTransactionFailed)
		if !strings.Contains(err.(*Error).Message, "used or canceled") {
			t.Errorf("message %q does not give the token's reason", err.(*Error).Message)
		}
		if got := balance(t, d, payer); got != before {
			t.Errorf("balance moved from %d to %d", before, got)
		}
		_, err = d.Reconcile(ctx, p.Authorization.From, p.Authorization.Nonce)
		wantReason(t, err, ReasonTransactionFailed)
	})

	t.Run("not ours", func(t *testing.T) {
		p := makePayment(t, 1, req, key, func(a *authorization) { a.to = common.HexToAddress(payer) })
		_, err := d.Settle(ctx, p, req)
		wantReason(t, err, ReasonRecipientMismatch)
	})

	t.Run("concurrent duplicates settle once", func(t *testing.T) {
		p := makePayment(t, 1, req, key, nil)
		before := balance(t, d, payer)
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() { _, errs[i] = d.Settle(ctx, p, req) })
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
				continue
			}
			wantReason(t, err, ReasonTransactionFailed)
		}
		if ok != 1 {
			t.Fatalf("%d settlements succeeded, want 1: %v", ok, errs)
		}
		if got := balance(t, d, payer); got != before-10000 {
			t.Errorf("balance = %d, want %d", got, before-10000)
		}
	})

	t.Run("reverted on chain", func(t *testing.T) {
		// Two transactions with the same authorization in one block: both
		// pass gas estimation, the second reverts when mined. On a chain of
		// its own without automining, so that the first is not mined before
		// the second is estimated (which would refuse it instead).
		d := newDevChain(t, DevChainConfig{NoAutomine: true})
		p := makePayment(t, 1, req, key, nil)
		a := p.Authorization.parsed()
		data := d.relayer.token.packTransfer(a, p.Signature)
		tx1, err := d.relayer.send(ctx, data)
		if err != nil {
			t.Fatal(err)
		}
		tx2, err := d.relayer.send(ctx, data)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Commit(); err != nil {
			t.Fatal(err)
		}
		s := Settlement{Network: DevNetwork, Payer: payer}
		r1, err := d.wait(ctx, tx1.Hash())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.relayer.outcome(r1, a, s); err != nil {
			t.Fatalf("first: %v", err)
		}
		r2, err := d.wait(ctx, tx2.Hash())
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.relayer.outcome(r2, a, s)
		wantReason(t, err, ReasonTransactionFailed)
	})

	t.Run("expired on chain", func(t *testing.T) {
		p := makePayment(t, 1, req, key, func(a *authorization) { a.validBefore = big.NewInt(time.Now().Unix() + 30) })
		if err := d.AdjustTime(2 * time.Minute); err != nil {
			t.Fatal(err)
		}
		_, err := d.Settle(ctx, p, req)
		wantReason(t, err, ReasonValidBefore)
	})
}

// TestDevChainSettleMany settles a burst larger than the transaction pool's
// default per-account queue (64), which would drop relayer transactions.
func TestDevChainSettleMany(t *testing.T) {
	d := newDevChain(t, DevChainConfig{Wallets: 4})
	req := testRequirement()
	const n = 150
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		_, key := DevWallet(i % 4)
		p := makePayment(t, 1+i%2, req, key, nil)
		wg.Go(func() {
			if _, err := d.Settle(context.Background(), p, req); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := balance(t, d, testPayTo); got != n*10000 {
		t.Fatalf("payee balance = %d, want %d", got, n*10000)
	}
	if got := certbank.USDC(balance(t, d, testPayTo)); got.String() != "1.5" {
		t.Errorf("payee holds %s USDC", got)
	}
}

// TestDevChainClockLead checks that mining keeps block time within
// MaxClockLead of the wall clock, however fast payments arrive.
func TestDevChainClockLead(t *testing.T) {
	d := newDevChain(t, DevChainConfig{MaxClockLead: time.Second})
	req := testRequirement()
	_, key := DevWallet(0)
	for range 3 {
		if _, err := d.Settle(context.Background(), makePayment(t, 1, req, key, nil), req); err != nil {
			t.Fatal(err)
		}
		d.chainMu.Lock()
		head := int64(d.headTime)
		d.chainMu.Unlock()
		if lead := head - time.Now().Unix(); lead > 1 {
			t.Fatalf("block time leads the wall clock by %d s, more than 1", lead)
		}
	}
}

// TestDevChainWaitsForSends checks that a transaction registered but not yet
// accepted by the node neither keeps the committer mining nor is given up
// while other settlements go through.
func TestDevChainWaitsForSends(t *testing.T) {
	d := newDevChain(t, DevChainConfig{MaxClockLead: time.Hour})
	unsent := common.HexToHash("0x01")
	d.expect(unsent)
	if d.awaiting() {
		t.Fatal("an unsent transaction keeps the committer busy")
	}
	req := testRequirement()
	_, key := DevWallet(0)
	for range devMaxMisses + 2 {
		if _, err := d.Settle(context.Background(), makePayment(t, 1, req, key, nil), req); err != nil {
			t.Fatal(err)
		}
	}
	d.waitMu.Lock()
	w := d.waiters[unsent]
	d.waitMu.Unlock()
	if w == nil || w.delivered || w.misses != 0 {
		t.Fatalf("unsent waiter = %+v, want untouched", w)
	}
	d.forget(unsent)
}

// TestRelayerKeptGas: after a first estimate, a settlement reuses the kept
// gas limit; a kept limit too low for the call (here forced) makes the
// relayer estimate again instead of failing the settlement.
func TestRelayerKeptGas(t *testing.T) {
	d := newDevChain(t, DevChainConfig{})
	ctx := context.Background()
	req := testRequirement()
	local := NewLocal(d)
	_, key := DevWallet(0)
	settle := func() {
		t.Helper()
		if _, err := local.Settle(ctx, makePayment(t, 1, req, key, nil), req); err != nil {
			t.Fatal(err)
		}
	}
	settle()
	r := d.relayer
	sel := [4]byte(r.token.packTransfer(makePayment(t, 1, req, key, nil).Authorization.parsed(), make([]byte, 65))[:4])
	r.quoteMu.Lock()
	kept := r.gasLimit[sel]
	r.gasLimit[sel] = 30_000 // far below what transferWithAuthorization needs
	r.quoteMu.Unlock()
	if kept < 50_000 {
		t.Fatalf("kept gas limit after the first settlement = %d, want an estimate with its margin", kept)
	}
	settle()
	r.quoteMu.Lock()
	again := r.gasLimit[sel]
	r.quoteMu.Unlock()
	if again < 50_000 {
		t.Fatalf("kept gas limit after a too-low one = %d, want a fresh estimate", again)
	}
}

// A transaction that someone else sends through the chain's JSON-RPC (a
// wallet, another instance's relayer) is mined without waiting for the
// service's own next settlement.
func TestDevChainMinesOthersTransactions(t *testing.T) {
	d := newDevChain(t, DevChainConfig{Wallets: 1, RPCAddr: "127.0.0.1:0"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := ethclient.DialContext(ctx, d.RPCURL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, keyHex := DevWallet(0)
	key := mustKey(t, keyHex)
	from := crypto.PubkeyToAddress(key.PublicKey)
	to := common.HexToAddress("0x00000000000000000000000000000000000000bb")
	for i := range 3 { // one after another, as a wallet waits for each
		nonce, err := c.PendingNonceAt(ctx, from)
		if err != nil {
			t.Fatal(err)
		}
		tip := big.NewInt(1e9)
		head, err := c.HeaderByNumber(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		feeCap := new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip)
		tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(DevNetworkChainID)), &types.DynamicFeeTx{
			ChainID: big.NewInt(DevNetworkChainID), Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: 21000, To: &to, Value: big.NewInt(1),
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.SendTransaction(ctx, tx); err != nil {
			t.Fatal(err)
		}
		var rcpt *types.Receipt
		for rcpt == nil { // as a wallet's waitForTransactionReceipt polls
			if rcpt, err = c.TransactionReceipt(ctx, tx.Hash()); ctx.Err() != nil {
				t.Fatalf("transaction %d sent through the JSON-RPC was not mined: %v", i, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if rcpt.Status != types.ReceiptStatusSuccessful {
			t.Fatalf("transaction %d reverted", i)
		}
	}
	if got, err := c.BalanceAt(ctx, to, nil); err != nil || got.Int64() != 3 {
		t.Fatalf("recipient balance %v, %v; want 3 wei", got, err)
	}
}
