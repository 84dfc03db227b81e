package x402

import (
	"context"
	"crypto/ecdsa"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/certbank/certbank"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/txpool"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth"
	"github.com/ethereum/go-ethereum/eth/catalyst"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/eth/filters"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/p2p"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rpc"
)

// DevWalletSeed is the published seed of the development wallets. Wallet i
// has the private key keccak256(DevWalletSeed ‖ uint32 big-endian i); in the
// astronomically unlikely case that this is not a valid secp256k1 key, the
// hash is hashed again until it is.
//
// These keys are PUBLIC. They exist only on certbank's development chain,
// where they hold test USDC and test ETH; anything sent to them on a real
// network can be taken by anyone.
const DevWalletSeed = "certbank development wallet"

// DevRelayerSeed is the published seed of the development chain's relayer
// (and token minter): its private key is keccak256(DevRelayerSeed). Public,
// development only, like DevWalletSeed.
const DevRelayerSeed = "certbank development relayer"

// DevWallet returns development wallet i (i >= 0): its EIP-55 address and its
// 0x-hex private key, derived from DevWalletSeed. The key is public; use it
// only on the development chain.
func DevWallet(i int) (address, privateKeyHex string) {
	key := devWalletKey(i)
	return crypto.PubkeyToAddress(key.PublicKey).Hex(), formatPrivateKey(key)
}

func devWalletKey(i int) *ecdsa.PrivateKey {
	seed := make([]byte, len(DevWalletSeed)+4)
	copy(seed, DevWalletSeed)
	binary.BigEndian.PutUint32(seed[len(DevWalletSeed):], uint32(i))
	return keyFromSeed(seed)
}

func keyFromSeed(seed []byte) *ecdsa.PrivateKey {
	h := crypto.Keccak256(seed)
	for {
		if key, err := crypto.ToECDSA(h); err == nil {
			return key
		}
		h = crypto.Keccak256(h)
	}
}

// DevNetwork is the network a development chain presents itself as: a test
// network, never a mainnet.
const (
	DevNetwork        = "base-sepolia"
	DevNetworkChainID = 84532
)

// DevChainConfig configures NewDevChain.
type DevChainConfig struct {
	// Network must name Base Sepolia ("base-sepolia" or "eip155:84532"):
	// the development chain presents itself as that test network (chain id
	// 84532, USDC at its address, EIP-712 domain "USDC" version "2") so
	// that official clients pay it without configuration, and a payment
	// signed for it is worthless on Base mainnet (another chain id,
	// contract and domain name). Setting it is the caller's explicit opt-in
	// to a simulated chain; any other value, Base mainnet above all, is
	// refused.
	Network string
	// Wallets is the number of development wallets (DevWallet(0) ...) to
	// fund; 0 means 10.
	Wallets int
	// WalletBalance is the test USDC minted to each wallet; 0 means 1000
	// USDC. Every wallet also gets 1000 test ETH, so that it can send
	// transactions (cancelAuthorization, or act as a relayer) itself.
	WalletBalance certbank.USDC
	// RPCAddr, if set, serves the chain's eth, net and web3 JSON-RPC over
	// HTTP on this loopback address, e.g. "127.0.0.1:0" for a free port (see
	// RPCURL). Other hosts are refused. Transactions sent through it are
	// mined at once, as a local test node with automining does.
	RPCAddr string
	// NoAutomine leaves transactions that others send waiting until the
	// chain's own next block (Settle, Mint or Commit): for tests of a slow
	// chain, where a settlement stays pending.
	NoAutomine bool
	// MaxClockLead bounds how far block time may run ahead of the wall
	// clock; 0 means 120 s. See DevChain.
	MaxClockLead time.Duration
}

// DevChain is an in-process development chain for settling payments without
// any network: go-ethereum's simulated beacon and a full node in memory,
// chain id 84532 (Base Sepolia), TestUSDC's runtime code at the Base Sepolia USDC address
// (contracts/TestUSDC.sol; its minter, set in the genesis alloc, is the
// relayer), a relayer funded with test ETH, and funded development wallets
// (DevWallet). It implements Settler and Reconciler. All its keys are
// public: it must never hold anything of value.
//
// Blocks are mined on demand. Settle sends the relayer's
// transferWithAuthorization, and a single committer goroutine mines every
// transaction waiting at that moment into one block, then hands each waiter
// its receipt; concurrent Settle calls therefore share blocks. Block
// timestamps must increase by at least a second per block, so a chain that
// mines more than one block per second runs ahead of the wall clock. The
// committer lets it lead by at most MaxClockLead and otherwise waits, while
// more transactions join the next block. So bursts settle as fast as the
// CPU allows (hundreds per second) until the lead is used up; after that
// throughput is about one block, that is as many settlements as are in
// flight, per second: with 300 concurrent payers, about 300 per second.
// A payment whose validBefore would pass before the next block is refused
// (ReasonValidBefore) before anything is sent, so keep payment windows
// (maxTimeoutSeconds) well above MaxClockLead.
type DevChain struct {
	node    *node.Node
	pool    *txpool.TxPool
	beacon  *catalyst.SimulatedBeacon
	client  *ethclient.Client
	relayer *relayer
	maxLead time.Duration

	chainMu  sync.Mutex // serialises mining and time changes
	headTime uint64     // timestamp of the head block; guarded by chainMu
	offset   int64      // seconds added by AdjustTime; guarded by chainMu

	waitMu  sync.Mutex
	waiters map[common.Hash]*devWaiter

	kick    chan struct{}
	stop    chan struct{}
	stopped chan struct{}
	closeMu sync.Once
}

type devWaiter struct {
	ch        chan *types.Receipt // buffered; a nil receipt means given up
	sent      bool                // the node accepted the transaction
	misses    int                 // blocks mined without it since it was sent
	delivered bool
}

// devMaxMisses is how many blocks may be mined without a sent transaction
// before its waiter gives up and reports the settlement as pending. The
// pool is synchronised before every block, so a sent transaction normally
// makes the next one.
const devMaxMisses = 16

// NewDevChain starts a development chain, mines its first block (which funds
// the wallets) and returns it. Close it when done.
func NewDevChain(ctx context.Context, cfg DevChainConfig) (*DevChain, error) {
	n, ok := LookupNetwork(cfg.Network)
	if !ok || n.ChainID != DevNetworkChainID {
		return nil, fmt.Errorf("development chain: network %q refused: the development chain presents itself only as the test network %s (chain %d), so that nothing it signs is worth anything on a mainnet; set payment.network to %q for development, or settle on a real chain with --chain-rpc or --facilitator",
			cfg.Network, DevNetwork, DevNetworkChainID, DevNetwork)
	}
	if cfg.Wallets == 0 {
		cfg.Wallets = 10
	}
	if cfg.Wallets < 0 {
		return nil, fmt.Errorf("development chain: %d wallets", cfg.Wallets)
	}
	if cfg.WalletBalance == 0 {
		cfg.WalletBalance = 1000 * 1e6
	}
	if cfg.WalletBalance < 0 {
		return nil, fmt.Errorf("development chain: wallet balance %s USDC", cfg.WalletBalance)
	}
	if cfg.MaxClockLead == 0 {
		cfg.MaxClockLead = 2 * time.Minute
	}
	rpcHost, rpcPort, err := loopbackAddr(cfg.RPCAddr)
	if err != nil {
		return nil, fmt.Errorf("development chain: %w", err)
	}
	tok, code, err := loadTestToken()
	if err != nil {
		return nil, fmt.Errorf("development chain: %w", err)
	}
	relayerKey := keyFromSeed([]byte(DevRelayerSeed))
	ethConf := devEthConfig(n, code, crypto.PubkeyToAddress(relayerKey.PublicKey), cfg.Wallets)
	nodeConf := devNodeConfig(rpcHost, rpcPort)

	d := &DevChain{
		maxLead: cfg.MaxClockLead,
		waiters: make(map[common.Hash]*devWaiter),
		kick:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	if err := d.start(nodeConf, ethConf); err != nil {
		return nil, fmt.Errorf("development chain: %w", err)
	}
	d.relayer = newRelayer(d.client, d, n, tok, relayerKey, 1<<20)
	go d.commitLoop()

	// The genesis block has timestamp 0: mine a first block, with the
	// wallets' funding in it, before anything checks time on chain.
	var funding []common.Hash
	for i := range cfg.Wallets {
		addr, _ := DevWallet(i)
		tx, err := d.relayer.send(ctx, tok.packMint(common.HexToAddress(addr), big.NewInt(int64(cfg.WalletBalance))))
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("development chain: fund wallet %d: %w", i, err)
		}
		funding = append(funding, tx.Hash())
	}
	if err := d.Commit(); err != nil {
		d.Close()
		return nil, fmt.Errorf("development chain: first block: %w", err)
	}
	for _, h := range funding {
		// The receipts come from the mined block (lookups by transaction
		// hash wait for the chain's background index).
		rcpt, err := d.wait(ctx, h)
		if err == nil && rcpt == nil {
			err = errors.New("not mined")
		}
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("development chain: funding transaction %s: %w", h.Hex(), err)
		}
		if rcpt.Status != types.ReceiptStatusSuccessful {
			d.Close()
			return nil, fmt.Errorf("development chain: funding transaction %s reverted", h.Hex())
		}
	}
	if !cfg.NoAutomine {
		go d.automine()
	}
	return d, nil
}

// devEthConfig is the chain of a DevChain: go-ethereum's development chain
// (every fork) with n's chain id, the test token's runtime code at n's USDC
// address with relayer as its minter, and test ETH for the relayer and for
// development wallets 0 to wallets-1.
func devEthConfig(n Network, code []byte, relayer common.Address, wallets int) *ethconfig.Config {
	testETH := new(big.Int).Mul(big.NewInt(1000), big.NewInt(params.Ether))
	alloc := core.SystemContractAllocs() // the forks of the dev chain need these
	alloc[common.HexToAddress(n.Asset)] = types.Account{
		Code: code,
		// Slot 0 of TestUSDC is its minter.
		Storage: map[common.Hash]common.Hash{{}: common.BytesToHash(relayer[:])},
	}
	alloc[relayer] = types.Account{Balance: new(big.Int).Mul(testETH, big.NewInt(1000))}
	for i := range wallets {
		addr, _ := DevWallet(i)
		alloc[common.HexToAddress(addr)] = types.Account{Balance: testETH}
	}
	chainConfig := *params.AllDevChainProtocolChanges // a copy: the original is shared
	chainConfig.ChainID = big.NewInt(n.ChainID)

	conf := ethconfig.Defaults
	conf.NetworkId = uint64(n.ChainID)
	conf.Genesis = &core.Genesis{Config: &chainConfig, GasLimit: 300_000_000, Alloc: alloc}
	conf.Miner.GasCeil = 300_000_000 // room for a few thousand settlements per block
	conf.SyncMode = ethconfig.FullSync
	conf.TxPool.NoLocals = true
	// One relayer may have thousands of transactions in flight. New ones
	// wait in the queue until the pool promotes them, so the queue limits
	// matter as much as the pending ones: the defaults (64 per account)
	// would drop transactions in bursts.
	conf.TxPool.GlobalSlots = 16384
	conf.TxPool.AccountSlots = 16384
	conf.TxPool.GlobalQueue = 16384
	conf.TxPool.AccountQueue = 16384
	conf.LogNoHistory = true
	return &conf
}

// devNodeConfig is an in-memory node without peers, serving eth, net and
// web3 over HTTP on host:port when host is set.
func devNodeConfig(host string, port int) *node.Config {
	conf := node.DefaultConfig
	conf.DataDir = "" // in memory
	conf.P2P = p2p.Config{NoDiscovery: true}
	if host != "" {
		conf.HTTPHost, conf.HTTPPort = host, port
		conf.HTTPModules = []string{"eth", "net", "web3"}
		conf.HTTPVirtualHosts = []string{"localhost", host}
	}
	return &conf
}

// start assembles the node as go-ethereum's ethclient/simulated does, but
// keeps the node (for its HTTP endpoint) and returns errors instead of
// panicking.
func (d *DevChain) start(nodeConf *node.Config, ethConf *ethconfig.Config) error {
	stack, err := node.New(nodeConf)
	if err != nil {
		return fmt.Errorf("new node: %w", err)
	}
	backend, err := eth.New(stack, ethConf)
	if err != nil {
		stack.Close()
		return fmt.Errorf("new eth service: %w", err)
	}
	filterSystem := filters.NewFilterSystem(backend.APIBackend, filters.Config{})
	stack.RegisterAPIs([]rpc.API{{Namespace: "eth", Service: filters.NewFilterAPI(filterSystem)}})
	if err := stack.Start(); err != nil {
		stack.Close()
		return fmt.Errorf("start node: %w", err)
	}
	beacon, err := catalyst.NewSimulatedBeacon(0, common.Address{}, backend)
	if err != nil {
		stack.Close()
		return fmt.Errorf("simulated beacon: %w", err)
	}
	if err := beacon.Fork(backend.BlockChain().GetCanonicalHash(0)); err != nil {
		stack.Close()
		return fmt.Errorf("simulated beacon: %w", err)
	}
	d.node, d.pool, d.beacon, d.client = stack, backend.TxPool(), beacon, ethclient.NewClient(stack.Attach())
	return nil
}

// automine mines what others send through the JSON-RPC: each transaction
// that enters the pool wakes the committer, as a local test node with
// automining does, so a wallet's wait for its receipt ends.
func (d *DevChain) automine() {
	txs := make(chan core.NewTxsEvent, 64)
	sub := d.pool.SubscribeTransactions(txs, false)
	defer sub.Unsubscribe()
	for {
		select {
		case <-d.stop:
			return
		case <-sub.Err():
			return
		case <-txs:
			d.wake()
		}
	}
}

// wake asks the committer to look for work, without blocking.
func (d *DevChain) wake() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// loopbackAddr splits a "host:port" that must be on the loopback interface.
func loopbackAddr(addr string) (host string, port int, err error) {
	if addr == "" {
		return "", 0, nil
	}
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("RPC address %q: %w", addr, err)
	}
	ip := net.ParseIP(h)
	if h != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", 0, fmt.Errorf("RPC address %q: the development chain serves JSON-RPC on loopback addresses only", addr)
	}
	port, err = strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("RPC address %q: bad port", addr)
	}
	return h, port, nil
}

// Close stops the chain. Settlements still waiting report pending.
func (d *DevChain) Close() error {
	var err error
	d.closeMu.Do(func() {
		close(d.stop)
		if d.relayer != nil {
			<-d.stopped
		}
		d.client.Close()
		err = errors.Join(d.beacon.Stop(), d.node.Close())
	})
	return err
}

// RPCURL returns the http:// URL of the chain's JSON-RPC, or "" when
// DevChainConfig.RPCAddr was empty.
func (d *DevChain) RPCURL() string {
	if d.node.Config().HTTPHost == "" {
		return ""
	}
	return d.node.HTTPEndpoint()
}

// Network returns the network the chain imitates (Base).
func (d *DevChain) Network() Network { return d.relayer.network }

// AuthorizationUsed implements ChainState.
func (d *DevChain) AuthorizationUsed(ctx context.Context, from, nonce string) (bool, error) {
	return d.relayer.AuthorizationUsed(ctx, from, nonce)
}

// BalanceOf implements ChainState.
func (d *DevChain) BalanceOf(ctx context.Context, address string) (*big.Int, error) {
	return d.relayer.BalanceOf(ctx, address)
}

// Settle implements Settler: it verifies p offline, refuses a payment that
// would expire before the next block, sends transferWithAuthorization and
// waits for the block that includes it. It is safe for concurrent use.
func (d *DevChain) Settle(ctx context.Context, p *Payment, r Requirement) (Settlement, error) {
	if p.Authorization.ValidBefore != nil {
		next := d.nextBlockTime()
		if p.Authorization.ValidBefore.Cmp(new(big.Int).SetUint64(next)) <= 0 {
			return Settlement{}, newError(ReasonValidBefore, fmt.Sprintf("the authorization expires at %s, before the development chain's next block (time %d); sign a new payment with a longer validity", p.Authorization.ValidBefore, next))
		}
	}
	return d.relayer.settle(ctx, p, r, time.Now())
}

// Reconcile implements Reconciler.
func (d *DevChain) Reconcile(ctx context.Context, from, nonce string) (Settlement, error) {
	return d.relayer.Reconcile(ctx, from, nonce)
}

// Mint creates amount test USDC for to and waits for it to be mined.
func (d *DevChain) Mint(ctx context.Context, to string, amount certbank.USDC) error {
	if !isHexAddress(to) {
		return fmt.Errorf("mint: %q is not an address", to)
	}
	if amount <= 0 {
		return fmt.Errorf("mint: amount %s USDC is not positive", amount)
	}
	if _, err := d.relayer.transact(ctx, d.relayer.token.packMint(common.HexToAddress(to), big.NewInt(int64(amount)))); err != nil {
		return fmt.Errorf("mint %s USDC to %s: %w", amount, to, err)
	}
	return nil
}

// Commit mines a block now with whatever transactions are waiting, whoever
// sent them (for example an RPCSettler over RPCURL), ignoring MaxClockLead.
func (d *DevChain) Commit() error {
	_, err := d.commit(context.Background())
	return err
}

// AdjustTime moves the chain's clock forward by at least a second and mines
// an empty block, for expiry tests. It fails while transactions are waiting.
func (d *DevChain) AdjustTime(by time.Duration) error {
	d.chainMu.Lock()
	defer d.chainMu.Unlock()
	if err := d.beacon.AdjustTime(by); err != nil {
		return fmt.Errorf("adjust time: %w", err)
	}
	d.offset += int64(by / time.Second)
	h, err := d.client.HeaderByNumber(context.Background(), nil)
	if err != nil {
		return fmt.Errorf("adjust time: head block: %w", err)
	}
	d.headTime = h.Time
	return nil
}

// nextBlockTime is the earliest timestamp the next block can have.
func (d *DevChain) nextBlockTime() uint64 {
	d.chainMu.Lock()
	defer d.chainMu.Unlock()
	return max(uint64(time.Now().Unix()+d.offset), d.headTime+1)
}

// expect, forget and wait implement confirmer for the relayer.
func (d *DevChain) expect(hash common.Hash) {
	d.waitMu.Lock()
	d.waiters[hash] = &devWaiter{ch: make(chan *types.Receipt, 1)}
	d.waitMu.Unlock()
}

func (d *DevChain) sent(hash common.Hash) {
	d.waitMu.Lock()
	if w := d.waiters[hash]; w != nil {
		w.sent = true
	}
	d.waitMu.Unlock()
}

func (d *DevChain) forget(hash common.Hash) {
	d.waitMu.Lock()
	delete(d.waiters, hash)
	d.waitMu.Unlock()
}

func (d *DevChain) wait(ctx context.Context, hash common.Hash) (*types.Receipt, error) {
	d.waitMu.Lock()
	w := d.waiters[hash]
	d.waitMu.Unlock()
	if w == nil {
		return nil, fmt.Errorf("transaction %s is not awaited", hash.Hex())
	}
	select {
	case d.kick <- struct{}{}:
	default: // a commit is already requested
	}
	select {
	case rcpt := <-w.ch:
		d.forget(hash)
		return rcpt, nil
	case <-ctx.Done():
		d.forget(hash)
		return nil, ctx.Err()
	case <-d.stop:
		return nil, errors.New("development chain closed")
	}
}

// commitLoop mines a block whenever transactions are awaited, keeping block
// time within maxLead of the wall clock.
func (d *DevChain) commitLoop() {
	defer close(d.stopped)
	for {
		select {
		case <-d.stop:
			return
		case <-d.kick:
		}
		// Mine while settlements wait for receipts; for transactions that
		// others sent, mine until the pool has nothing executable, giving
		// up on ones that stay unminable after a few blocks.
		for idle := 0; d.awaiting() || (d.poolPending() && idle < devMaxExternalBlocks); {
			external := !d.awaiting()
			if external {
				idle++
			}
			if wait := d.leadWait(); wait > 0 {
				select {
				case <-d.stop:
					return
				case <-time.After(wait):
				}
			}
			mined, err := d.commit(context.Background())
			if err != nil {
				// The chain is closing or broken; waiters time out or see
				// the stop.
				select {
				case <-d.stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
			if external && mined == 0 {
				// The pool's count lags the block just mined: an empty
				// block means nothing executable is left, and more would
				// only push block time ahead of the clock.
				break
			}
		}
	}
}

// devMaxExternalBlocks is how many blocks the committer mines in a row for
// transactions that others sent and that stay executable but unmined (a gas
// limit above the block's, say) before it waits for the next one.
const devMaxExternalBlocks = 3

// poolPending reports whether the pool holds executable transactions.
func (d *DevChain) poolPending() bool {
	pending, _ := d.pool.Stats()
	return pending > 0
}

func (d *DevChain) awaiting() bool {
	d.waitMu.Lock()
	defer d.waitMu.Unlock()
	for _, w := range d.waiters {
		if w.sent && !w.delivered {
			return true
		}
	}
	return false
}

// leadWait is how long to wait before the next block so that its time stays
// within maxLead of the (adjusted) wall clock.
func (d *DevChain) leadWait() time.Duration {
	d.chainMu.Lock()
	defer d.chainMu.Unlock()
	now := time.Now()
	wall := now.Unix() + d.offset
	next := max(wall, int64(d.headTime)+1)
	lead := time.Duration(next-wall) * time.Second
	if lead <= d.maxLead {
		return 0
	}
	// Wait until the wall clock has caught up to within maxLead.
	return lead - d.maxLead - time.Duration(now.Nanosecond())
}

// commit mines one block and delivers the receipts in it; it returns how
// many transactions the block holds.
func (d *DevChain) commit(ctx context.Context) (int, error) {
	d.chainMu.Lock()
	hash := d.beacon.Commit()
	h, err := d.client.HeaderByHash(ctx, hash)
	if err != nil {
		d.chainMu.Unlock()
		return 0, fmt.Errorf("mined block: %w", err)
	}
	d.headTime = h.Time
	d.chainMu.Unlock()
	receipts, err := d.client.BlockReceipts(ctx, rpc.BlockNumberOrHashWithHash(hash, false))
	if err != nil {
		return 0, fmt.Errorf("receipts of block %d: %w", h.Number, err)
	}
	d.waitMu.Lock()
	defer d.waitMu.Unlock()
	// Waiters are removed by wait (or forget), not here: a sender may not
	// have started waiting yet.
	for _, rcpt := range receipts {
		if w := d.waiters[rcpt.TxHash]; w != nil && !w.delivered {
			w.ch <- rcpt
			w.delivered = true
		}
	}
	for _, w := range d.waiters {
		if !w.sent || w.delivered {
			continue
		}
		if w.misses++; w.misses > devMaxMisses {
			w.ch <- nil // not mined: report pending, and resync the relayer nonce
			w.delivered = true
			go d.relayer.resetNonce()
		}
	}
	return len(receipts), nil
}
