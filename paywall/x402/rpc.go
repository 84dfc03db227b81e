package x402

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
)

// RPCConfig configures NewRPCSettler.
type RPCConfig struct {
	// URL is the chain's JSON-RPC endpoint (http, https, ws or wss).
	URL string
	// RelayerKey is the hex private key of the account that submits
	// settlements and pays their gas. It needs ETH, no USDC.
	RelayerKey string
	// Network is the network the endpoint serves ("base", "base-sepolia",
	// ...). NewRPCSettler checks the endpoint's chain id against it.
	Network string
	// ReceiptTimeout bounds the wait for a settlement's receipt; after it
	// Settle reports the settlement as pending. 0 means 30 s.
	ReceiptTimeout time.Duration
	// PollInterval is the pause between receipt polls; 0 means 1 s.
	PollInterval time.Duration
	// RequestTimeout bounds each JSON-RPC request; 0 means 10 s.
	RequestTimeout time.Duration
	// LogLookback is how many blocks back Reconcile searches for the
	// authorization's log; 0 means 10000.
	LogLookback uint64
}

// RPCSettler settles through any Ethereum JSON-RPC endpoint with a relayer
// key. It implements Settler and Reconciler and is safe for concurrent use;
// its sends are serialised to keep relayer nonces in order.
type RPCSettler struct {
	client   *ethclient.Client
	relayer  *relayer
	timeout  time.Duration
	interval time.Duration
}

// NewRPCSettler connects to cfg.URL and checks that it serves cfg.Network's
// chain and that the network's USDC has code there.
func NewRPCSettler(ctx context.Context, cfg RPCConfig) (*RPCSettler, error) {
	n, ok := LookupNetwork(cfg.Network)
	if !ok {
		return nil, fmt.Errorf("rpc settler: unknown network %q", cfg.Network)
	}
	key, err := parsePrivateKey(cfg.RelayerKey)
	if err != nil {
		return nil, fmt.Errorf("rpc settler: relayer key: %w", err)
	}
	if cfg.ReceiptTimeout == 0 {
		cfg.ReceiptTimeout = 30 * time.Second
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = 10 * time.Second
	}
	if cfg.LogLookback == 0 {
		cfg.LogLookback = 10_000
	}
	c, err := rpc.DialOptions(ctx, cfg.URL, rpc.WithHTTPClient(&http.Client{Timeout: cfg.RequestTimeout}))
	if err != nil {
		return nil, fmt.Errorf("rpc settler: dial: %w", err)
	}
	client := ethclient.NewClient(c)
	s := &RPCSettler{client: client, timeout: cfg.ReceiptTimeout, interval: cfg.PollInterval}
	tok, _, err := loadTestToken() // the ABI; FiatToken's matches for every call used
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("rpc settler: %w", err)
	}
	rctx, cancel := context.WithTimeout(ctx, cfg.RequestTimeout)
	defer cancel()
	id, err := client.ChainID(rctx)
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("rpc settler: chain id: %w", err)
	}
	if id.Cmp(big.NewInt(n.ChainID)) != 0 {
		client.Close()
		return nil, fmt.Errorf("rpc settler: %s serves chain %s, not %s (%d)", cfg.URL, id, n.Name, n.ChainID)
	}
	code, err := client.CodeAt(rctx, common.HexToAddress(n.Asset), nil)
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("rpc settler: token code: %w", err)
	}
	if len(code) == 0 {
		client.Close()
		return nil, fmt.Errorf("rpc settler: no contract at %s on %s", n.Asset, n.Name)
	}
	s.relayer = newRelayer(client, s, n, tok, key, cfg.LogLookback)
	return s, nil
}

// Close closes the connection.
func (s *RPCSettler) Close() { s.client.Close() }

// AuthorizationUsed implements ChainState.
func (s *RPCSettler) AuthorizationUsed(ctx context.Context, from, nonce string) (bool, error) {
	return s.relayer.AuthorizationUsed(ctx, from, nonce)
}

// BalanceOf implements ChainState.
func (s *RPCSettler) BalanceOf(ctx context.Context, address string) (*big.Int, error) {
	return s.relayer.BalanceOf(ctx, address)
}

// Settle implements Settler. It verifies p offline, simulates the transfer
// through gas estimation, sends transferWithAuthorization and polls for its
// receipt for at most ReceiptTimeout. If none arrives it returns a pending
// Settlement with the hash and a ReasonSettlementPending error, and
// remembers the transaction: a later Settle of the same authorization, or
// Reconcile, looks it up instead of sending again.
func (s *RPCSettler) Settle(ctx context.Context, p *Payment, r Requirement) (Settlement, error) {
	return s.relayer.settle(ctx, p, r, time.Now())
}

// Reconcile implements Reconciler.
func (s *RPCSettler) Reconcile(ctx context.Context, from, nonce string) (Settlement, error) {
	return s.relayer.Reconcile(ctx, from, nonce)
}

// expect, sent and forget implement confirmer; polling needs no
// bookkeeping.
func (s *RPCSettler) expect(common.Hash) {}
func (s *RPCSettler) sent(common.Hash)   {}
func (s *RPCSettler) forget(common.Hash) {}

// wait polls for the receipt of hash until ReceiptTimeout.
func (s *RPCSettler) wait(ctx context.Context, hash common.Hash) (*types.Receipt, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	for {
		rcpt, err := s.client.TransactionReceipt(ctx, hash)
		if err == nil {
			return rcpt, nil
		}
		// Not mined yet (ethereum.NotFound), or a transient RPC error:
		// poll again until the deadline.
		select {
		case <-ctx.Done():
			return nil, nil
		case <-tick.C:
		}
	}
}
