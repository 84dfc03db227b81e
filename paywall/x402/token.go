package x402

import (
	"bytes"
	_ "embed" // the compiled test token
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// testTokenJSON is contracts/TestUSDC.sol compiled by contracts/compile.mjs.
//
//go:embed testtoken.json
var testTokenJSON []byte

// tokenArtifact is the part of testtoken.json that the package uses.
type tokenArtifact struct {
	SourceSHA256     string          `json:"sourceSha256"`
	ABI              json.RawMessage `json:"abi"`
	DeployedBytecode string          `json:"deployedBytecode"`
}

// Event topics of the token.
var (
	transferTopic              = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
	authorizationUsedTopic     = crypto.Keccak256Hash([]byte("AuthorizationUsed(address,bytes32)"))
	authorizationCanceledTopic = crypto.Keccak256Hash([]byte("AuthorizationCanceled(address,bytes32)"))
)

// token packs calls to an EIP-3009 USDC-like token. Its ABI is that of the
// test token, which matches FiatToken for every function used here.
type token struct {
	balanceOf, authorizationState, mint, transferWithAuthorization, cancelAuthorization abi.Method
}

// loadTestToken parses the embedded artifact.
func loadTestToken() (token, []byte, error) {
	var art tokenArtifact
	if err := json.Unmarshal(testTokenJSON, &art); err != nil {
		return token{}, nil, fmt.Errorf("parse embedded testtoken.json: %w", err)
	}
	parsed, err := abi.JSON(bytes.NewReader(art.ABI))
	if err != nil {
		return token{}, nil, fmt.Errorf("parse test token ABI: %w", err)
	}
	var t token
	for _, m := range []struct {
		dst   *abi.Method
		name  string
		arity int
	}{
		{&t.balanceOf, "balanceOf", 1},
		{&t.authorizationState, "authorizationState", 2},
		{&t.mint, "mint", 2},
		{&t.transferWithAuthorization, "transferWithAuthorization", 9}, // the v, r, s overload
		{&t.cancelAuthorization, "cancelAuthorization", 5},
	} {
		found := false
		// Overloads get generated names; select by raw name and arity.
		for _, candidate := range parsed.Methods {
			if candidate.RawName == m.name && len(candidate.Inputs) == m.arity {
				*m.dst, found = candidate, true
				break
			}
		}
		if !found {
			return token{}, nil, fmt.Errorf("test token ABI has no %s with %d inputs", m.name, m.arity)
		}
	}
	code := common.FromHex(art.DeployedBytecode)
	if len(code) == 0 {
		return token{}, nil, fmt.Errorf("test token artifact has no deployed bytecode")
	}
	return t, code, nil
}

func pack(m abi.Method, args ...any) []byte {
	in, err := m.Inputs.Pack(args...)
	if err != nil {
		// Arguments are typed by the callers below; a failure is a bug.
		panic(fmt.Sprintf("x402: pack %s: %v", m.RawName, err))
	}
	return append(append([]byte{}, m.ID...), in...)
}

func (t token) packBalanceOf(owner common.Address) []byte { return pack(t.balanceOf, owner) }

func (t token) packAuthorizationState(from common.Address, nonce common.Hash) []byte {
	return pack(t.authorizationState, from, [32]byte(nonce))
}

func (t token) packMint(to common.Address, amount *big.Int) []byte { return pack(t.mint, to, amount) }

// packTransfer packs transferWithAuthorization(from, to, value, validAfter,
// validBefore, nonce, v, r, s) with v normalised to 27 or 28.
func (t token) packTransfer(a authorization, sig []byte) []byte {
	v, r, s := splitSignature(sig)
	return pack(t.transferWithAuthorization, a.from, a.to, a.value, a.validAfter, a.validBefore, [32]byte(a.nonce), v, r, s)
}

// packCancel packs cancelAuthorization(authorizer, nonce, v, r, s).
func (t token) packCancel(authorizer common.Address, nonce common.Hash, sig []byte) []byte {
	v, r, s := splitSignature(sig)
	return pack(t.cancelAuthorization, authorizer, [32]byte(nonce), v, r, s)
}

func splitSignature(sig []byte) (v uint8, r, s [32]byte) {
	copy(r[:], sig[0:32])
	copy(s[:], sig[32:64])
	v = sig[64]
	if v < 27 {
		v += 27
	}
	return v, r, s
}

// unpackUint256 decodes a single uint256 return value.
func unpackUint256(out []byte) (*big.Int, error) {
	if len(out) != 32 {
		return nil, fmt.Errorf("token returned %d bytes, want 32", len(out))
	}
	return new(big.Int).SetBytes(out), nil
}

// unpackBool decodes a single bool return value.
func unpackBool(out []byte) (bool, error) {
	x, err := unpackUint256(out)
	if err != nil {
		return false, err
	}
	if x.BitLen() > 1 {
		return false, fmt.Errorf("token returned %s for a bool", x)
	}
	return x.Sign() == 1, nil
}
