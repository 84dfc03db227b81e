package x402

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"
)

// ethBackend is the part of an Ethereum JSON-RPC client that settlement
// uses. *ethclient.Client satisfies it, over HTTP or in process.
type ethBackend interface {
	ethereum.ContractCaller
	ethereum.GasEstimator
	ethereum.TransactionSender
	ethereum.LogFilterer
	SuggestGasTipCap(ctx context.Context) (*big.Int, error)
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
	PendingNonceAt(ctx context.Context, account common.Address) (uint64, error)
	TransactionReceipt(ctx context.Context, hash common.Hash) (*types.Receipt, error)
}

// confirmer learns the outcome of sent transactions. DevChain confirms by
// mining; RPCSettler by polling for receipts.
type confirmer interface {
	// expect is called before a transaction is broadcast, then sent once
	// the node has accepted it, or forget if broadcasting failed.
	expect(hash common.Hash)
	sent(hash common.Hash)
	forget(hash common.Hash)
	// wait returns the receipt of a broadcast transaction, or (nil, nil)
	// when it was not confirmed in time.
	wait(ctx context.Context, hash common.Hash) (*types.Receipt, error)
}

// relayer submits EIP-3009 authorizations to the token and pays the gas.
// DevChain and RPCSettler share it. Sends are serialised so that relayer
// nonces stay in order; gas estimation and receipt waits run concurrently.
type relayer struct {
	eth         ethBackend
	confirm     confirmer
	network     Network
	asset       common.Address
	token       token
	key         *ecdsa.PrivateKey
	address     common.Address
	signer      types.Signer
	logLookback uint64

	sendMu    sync.Mutex
	nonce     uint64
	haveNonce bool

	pendingMu sync.Mutex
	pending   map[string]common.Hash // ReplayKey → unconfirmed settlement tx

	// A gas limit per function (selector), from a first estimate; later
	// sends of that function are only simulated once, which catches a
	// revert as well as an estimate does at a fraction of its EVM runs.
	// And the fee quote (tip, base fee), fetched at most once a second.
	quoteMu  sync.Mutex
	gasLimit map[[4]byte]uint64
	tip      *big.Int
	baseFee  *big.Int
	quotedAt time.Time
}

// quoteTTL is how long a fee quote is reused. A base fee rises by at most
// 12.5 % a block, and the fee cap allows twice the quoted one.
const quoteTTL = time.Second

func newRelayer(eth ethBackend, confirm confirmer, n Network, t token, key *ecdsa.PrivateKey, logLookback uint64) *relayer {
	return &relayer{
		eth:         eth,
		confirm:     confirm,
		network:     n,
		asset:       common.HexToAddress(n.Asset),
		token:       t,
		key:         key,
		address:     crypto.PubkeyToAddress(key.PublicKey),
		signer:      types.LatestSignerForChainID(big.NewInt(n.ChainID)),
		logLookback: logLookback,
		pending:     make(map[string]common.Hash),
		gasLimit:    make(map[[4]byte]uint64),
	}
}

// AuthorizationUsed implements ChainState with authorizationState(from, nonce).
func (r *relayer) AuthorizationUsed(ctx context.Context, from, nonce string) (bool, error) {
	if !isHexAddress(from) {
		return false, fmt.Errorf("authorization state: %q is not an address", from)
	}
	if len(nonce) != 66 || !hasHexPrefix(nonce) || !isHex(nonce[2:]) {
		return false, fmt.Errorf("authorization state: %q is not a 32-byte nonce", nonce)
	}
	out, err := r.call(ctx, r.token.packAuthorizationState(common.HexToAddress(from), common.HexToHash(nonce)))
	if err != nil {
		return false, fmt.Errorf("authorization state of %s: %w", from, err)
	}
	return unpackBool(out)
}

// BalanceOf implements ChainState with balanceOf(address).
func (r *relayer) BalanceOf(ctx context.Context, address string) (*big.Int, error) {
	if !isHexAddress(address) {
		return nil, fmt.Errorf("balance: %q is not an address", address)
	}
	out, err := r.call(ctx, r.token.packBalanceOf(common.HexToAddress(address)))
	if err != nil {
		return nil, fmt.Errorf("balance of %s: %w", address, err)
	}
	return unpackUint256(out)
}

func (r *relayer) call(ctx context.Context, data []byte) ([]byte, error) {
	return r.eth.CallContract(ctx, ethereum.CallMsg{To: &r.asset, Data: data}, nil)
}

// settle verifies p offline (so that nothing foreign is ever broadcast),
// submits transferWithAuthorization and checks the outcome.
func (r *relayer) settle(ctx context.Context, p *Payment, req Requirement, now time.Time) (Settlement, error) {
	if n := req.network(); n.ChainID != r.network.ChainID {
		return Settlement{}, newError(ReasonNetworkMismatch, fmt.Sprintf("this settler pays on %s, not %s", r.network.Name, req.Network))
	}
	payer, err := VerifyOffline(p, req, now)
	if err != nil {
		return Settlement{}, err
	}
	key := p.ReplayKey()
	r.pendingMu.Lock()
	_, isPending := r.pending[key]
	r.pendingMu.Unlock()
	if isPending {
		// An identical retry of a pending settlement: never broadcast twice.
		return r.Reconcile(ctx, p.Authorization.From, p.Authorization.Nonce)
	}
	a := p.Authorization.parsed()
	tx, err := r.send(ctx, r.token.packTransfer(a, p.Signature))
	if err != nil {
		var rev *revertError
		if errors.As(err, &rev) {
			return Settlement{}, wrapError(ReasonTransactionFailed, fmt.Sprintf("the token refused the transfer (%s); nothing was charged, sign a new payment", rev.reason), err)
		}
		return Settlement{}, wrapError(ReasonUnexpectedSettle, "the settlement could not be sent; nothing was charged, retry the same payment in a moment", err)
	}
	s := Settlement{Transaction: tx.Hash().Hex(), Network: r.network.Name, Payer: payer}
	rcpt, err := r.confirm.wait(ctx, tx.Hash())
	if err != nil || rcpt == nil {
		r.pendingMu.Lock()
		r.pending[key] = tx.Hash()
		r.pendingMu.Unlock()
		s.Pending = true
		return s, wrapError(ReasonSettlementPending, fmt.Sprintf("settlement %s was sent but is not confirmed yet; retry the same payment later to learn its outcome, and do not pay again", s.Transaction), err)
	}
	return r.outcome(rcpt, a, s)
}

// outcome checks a settlement receipt: success, and the token's Transfer
// log from the payer to the payee for exactly the value.
func (r *relayer) outcome(rcpt *types.Receipt, a authorization, s Settlement) (Settlement, error) {
	if rcpt.Status != types.ReceiptStatusSuccessful {
		r.forgetGas()
		return Settlement{}, newError(ReasonTransactionFailed, fmt.Sprintf("settlement transaction %s reverted on chain; nothing was charged, sign a new payment", s.Transaction))
	}
	for _, l := range rcpt.Logs {
		if l.Address == r.asset && len(l.Topics) == 3 && l.Topics[0] == transferTopic &&
			common.BytesToAddress(l.Topics[1][:]) == a.from && common.BytesToAddress(l.Topics[2][:]) == a.to &&
			new(big.Int).SetBytes(l.Data).Cmp(a.value) == 0 {
			return s, nil
		}
	}
	return Settlement{}, newError(ReasonTransferEventMismatch, fmt.Sprintf("settlement transaction %s succeeded but logged no Transfer of %s from %s to %s; contact the operator", s.Transaction, a.value, a.from.Hex(), a.to.Hex()))
}

// Reconcile implements Reconciler. It first looks at the receipt of a
// settlement this relayer sent and still holds as pending, then at the
// token: authorizationState, and the AuthorizationUsed or
// AuthorizationCanceled log within the last logLookback blocks to tell a
// payment from a cancellation and to find the transaction. An authorization
// used without a log in that window is reported as paid with an empty
// Transaction. While the authorization is unused the answer stays pending:
// it can still be used until validBefore passes on chain.
func (r *relayer) Reconcile(ctx context.Context, from, nonce string) (Settlement, error) {
	if !isHexAddress(from) || len(nonce) != 66 || !hasHexPrefix(nonce) || !isHex(nonce[2:]) {
		return Settlement{}, newError(ReasonInvalidPayload, "reconcile needs a payer address and a 32-byte 0x-hex nonce")
	}
	key := strings.ToLower(from) + "/" + strings.ToLower(nonce)
	s := Settlement{Network: r.network.Name, Payer: common.HexToAddress(from).Hex()}
	r.pendingMu.Lock()
	hash, known := r.pending[key]
	r.pendingMu.Unlock()
	reverted := false
	if known {
		s.Transaction = hash.Hex()
		rcpt, err := r.eth.TransactionReceipt(ctx, hash)
		switch {
		case err == nil && rcpt.Status == types.ReceiptStatusSuccessful:
			r.forgetPending(key)
			return s, nil
		case err == nil:
			r.forgetPending(key)
			reverted = true
		case !errors.Is(err, ethereum.NotFound):
			return s, wrapError(ReasonSettlementPending, "the settlement's status could not be read; retry later", err)
		}
	}
	used, err := r.AuthorizationUsed(ctx, from, nonce)
	if err != nil {
		return s, wrapError(ReasonSettlementPending, "the authorization's state could not be read; retry later", err)
	}
	if !used {
		if reverted {
			return Settlement{}, newError(ReasonTransactionFailed, fmt.Sprintf("settlement transaction %s reverted on chain; nothing was charged, sign a new payment", s.Transaction))
		}
		s.Pending = true
		return s, newError(ReasonSettlementPending, "the payment has not settled yet; it can still settle until its validBefore passes, so retry later and do not pay again")
	}
	tx, canceled, err := r.findAuthorizationLog(ctx, common.HexToAddress(from), common.HexToHash(nonce))
	switch {
	case err != nil:
		// A node that refuses the log range still told us the
		// authorization was used: the money moved to the signed payee.
		s.Transaction = ""
	case canceled:
		r.forgetPending(key)
		return Settlement{}, newError(ReasonTransactionFailed, "the payer canceled this authorization; nothing was charged")
	default:
		s.Transaction = tx
	}
	r.forgetPending(key)
	return s, nil
}

func (r *relayer) forgetPending(key string) {
	r.pendingMu.Lock()
	delete(r.pending, key)
	r.pendingMu.Unlock()
}

// findAuthorizationLog looks for the AuthorizationUsed or
// AuthorizationCanceled log of (from, nonce).
func (r *relayer) findAuthorizationLog(ctx context.Context, from common.Address, nonce common.Hash) (tx string, canceled bool, err error) {
	head, err := r.eth.HeaderByNumber(ctx, nil)
	if err != nil {
		return "", false, fmt.Errorf("head block: %w", err)
	}
	start := uint64(0)
	if n := head.Number.Uint64(); n > r.logLookback {
		start = n - r.logLookback
	}
	logs, err := r.eth.FilterLogs(ctx, ethereum.FilterQuery{
		FromBlock: new(big.Int).SetUint64(start),
		ToBlock:   head.Number,
		Addresses: []common.Address{r.asset},
		Topics: [][]common.Hash{
			{authorizationUsedTopic, authorizationCanceledTopic},
			{common.BytesToHash(from[:])},
			{nonce},
		},
	})
	if err != nil {
		return "", false, fmt.Errorf("authorization logs: %w", err)
	}
	for _, l := range logs {
		if l.Removed {
			continue
		}
		return l.TxHash.Hex(), l.Topics[0] == authorizationCanceledTopic, nil
	}
	return "", false, nil
}

// revertError is a call that the EVM reverted, with its reason.
type revertError struct {
	reason string
	err    error
}

func (e *revertError) Error() string { return "execution reverted: " + e.reason }
func (e *revertError) Unwrap() error { return e.err }

// asRevert recognises a revert in a JSON-RPC error and decodes its reason.
func asRevert(err error) (*revertError, bool) {
	var de rpc.DataError
	if errors.As(err, &de) {
		if data, ok := de.ErrorData().(string); ok {
			if reason, uerr := abi.UnpackRevert(common.FromHex(data)); uerr == nil {
				return &revertError{reason: reason, err: err}, true
			}
		}
	}
	msg := err.Error()
	if i := strings.Index(msg, "execution reverted"); i >= 0 {
		reason := strings.TrimPrefix(msg[i+len("execution reverted"):], ":")
		reason = strings.TrimSpace(reason)
		if reason == "" {
			reason = "no reason given"
		}
		return &revertError{reason: reason, err: err}, true
	}
	return nil, false
}

// send estimates gas for a call of the token with data (which also
// simulates it: a revert comes back as *revertError), then signs it with the
// next relayer nonce and broadcasts it.
func (r *relayer) send(ctx context.Context, data []byte) (*types.Transaction, error) {
	gas, err := r.gasFor(ctx, data)
	if err != nil {
		return nil, err
	}
	tip, baseFee, err := r.fees(ctx)
	if err != nil {
		return nil, err
	}
	feeCap := new(big.Int).Add(tip, new(big.Int).Mul(baseFee, big.NewInt(2)))

	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	if !r.haveNonce {
		n, err := r.eth.PendingNonceAt(ctx, r.address)
		if err != nil {
			return nil, fmt.Errorf("relayer nonce: %w", err)
		}
		r.nonce, r.haveNonce = n, true
	}
	tx, err := types.SignNewTx(r.key, r.signer, &types.DynamicFeeTx{
		ChainID:   big.NewInt(r.network.ChainID),
		Nonce:     r.nonce,
		GasTipCap: tip,
		GasFeeCap: feeCap,
		Gas:       gas,
		To:        &r.asset,
		Data:      data,
	})
	if err != nil {
		return nil, fmt.Errorf("sign transaction: %w", err)
	}
	r.confirm.expect(tx.Hash())
	if err := r.eth.SendTransaction(ctx, tx); err != nil {
		r.confirm.forget(tx.Hash())
		r.haveNonce = false // resynchronise from the node next time
		return nil, fmt.Errorf("send transaction: %w", err)
	}
	r.nonce++
	r.confirm.sent(tx.Hash())
	return tx, nil
}

// gasFor returns the gas limit for a call of data to the token: the first
// call of a function is estimated (with a margin: state may change before
// inclusion), later ones reuse that limit and are only simulated. A revert
// comes back as *revertError.
func (r *relayer) gasFor(ctx context.Context, data []byte) (uint64, error) {
	var sel [4]byte
	copy(sel[:], data)
	r.quoteMu.Lock()
	gas := r.gasLimit[sel]
	r.quoteMu.Unlock()
	msg := ethereum.CallMsg{From: r.address, To: &r.asset, Data: data}
	if gas > 0 {
		sim := msg
		sim.Gas = gas
		_, err := r.eth.CallContract(ctx, sim, nil)
		if err == nil {
			return gas, nil
		}
		if rev, ok := asRevert(err); ok {
			return 0, rev
		}
		// Not a revert (out of gas under the kept limit, or a node
		// error): estimate afresh.
		r.forgetGas()
	}
	est, err := r.eth.EstimateGas(ctx, msg)
	if err != nil {
		if rev, ok := asRevert(err); ok {
			return 0, rev
		}
		return 0, fmt.Errorf("estimate gas: %w", err)
	}
	gas = est + est/4 + 10_000
	r.quoteMu.Lock()
	r.gasLimit[sel] = gas
	r.quoteMu.Unlock()
	return gas, nil
}

// forgetGas drops the kept gas limits, after a settlement failed on chain
// (it may have run out of gas): the next send estimates again.
func (r *relayer) forgetGas() {
	r.quoteMu.Lock()
	clear(r.gasLimit)
	r.quoteMu.Unlock()
}

// fees returns the gas tip and the base fee of the head block, fetched at
// most once per quoteTTL.
func (r *relayer) fees(ctx context.Context) (tip, baseFee *big.Int, err error) {
	r.quoteMu.Lock()
	defer r.quoteMu.Unlock()
	if r.tip != nil && time.Since(r.quotedAt) < quoteTTL {
		return r.tip, r.baseFee, nil
	}
	tip, err = r.eth.SuggestGasTipCap(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("suggest gas tip: %w", err)
	}
	head, err := r.eth.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("head block: %w", err)
	}
	baseFee = head.BaseFee
	if baseFee == nil { // a chain without EIP-1559 fees
		baseFee = tip
	}
	r.tip, r.baseFee, r.quotedAt = tip, baseFee, time.Now()
	return tip, baseFee, nil
}

// resetNonce makes the next send read the relayer nonce from the node.
func (r *relayer) resetNonce() {
	r.sendMu.Lock()
	r.haveNonce = false
	r.sendMu.Unlock()
}

// transact sends a call of the token and waits for a successful receipt.
func (r *relayer) transact(ctx context.Context, data []byte) (*types.Receipt, error) {
	tx, err := r.send(ctx, data)
	if err != nil {
		return nil, err
	}
	rcpt, err := r.confirm.wait(ctx, tx.Hash())
	if err != nil {
		return nil, fmt.Errorf("wait for %s: %w", tx.Hash().Hex(), err)
	}
	if rcpt == nil {
		return nil, fmt.Errorf("transaction %s not confirmed in time", tx.Hash().Hex())
	}
	if rcpt.Status != types.ReceiptStatusSuccessful {
		return rcpt, fmt.Errorf("transaction %s reverted", tx.Hash().Hex())
	}
	return rcpt, nil
}
