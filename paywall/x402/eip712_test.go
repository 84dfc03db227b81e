package x402

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// baseUSDCDomainSeparator is DOMAIN_SEPARATOR() of the real USDC on Base
// mainnet (chain 8453, "USD Coin", version "2").
const baseUSDCDomainSeparator = "0x02fa7265e7c5d81118673727957699e4d68f74cd74b7db77da710fe8a2c7834f"

// sepoliaUSDCDomainSeparator is DOMAIN_SEPARATOR() of USDC on Base Sepolia
// (chain 84532, "USDC", version "2", at 0x036CbD53842c5426634e7929541eC2318f3dCF7e),
// computed independently with viem's hashDomain.
const sepoliaUSDCDomainSeparator = "0x71f17a3b2ff373b803d70a5a07c046c1a2bc8e89c09ef722fcb047abe94c9818"

func TestTypeHashes(t *testing.T) {
	for _, tt := range []struct {
		typ  string
		want common.Hash
	}{
		{"EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)", domainTypeHash},
		{"TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)", transferTypeHash},
		{"CancelAuthorization(address authorizer,bytes32 nonce)", cancelTypeHash},
	} {
		if got := crypto.Keccak256Hash([]byte(tt.typ)); got != tt.want {
			t.Errorf("keccak256(%q) = %s, want %s", tt.typ, got, tt.want)
		}
	}
}

func TestDomainSeparatorBase(t *testing.T) {
	base, _ := LookupNetwork("base")
	if got := domainSeparator(base).Hex(); got != baseUSDCDomainSeparator {
		t.Fatalf("Go domain separator = %s, want %s", got, baseUSDCDomainSeparator)
	}
	sepolia, _ := LookupNetwork(DevNetwork)
	if got := domainSeparator(sepolia).Hex(); got != sepoliaUSDCDomainSeparator {
		t.Fatalf("Go domain separator of %s = %s, want %s", DevNetwork, got, sepoliaUSDCDomainSeparator)
	}

	// The test token, at the Base Sepolia USDC address on the chain-84532
	// development chain, must compute Base Sepolia's value at call time,
	// never Base mainnet's.
	d := newDevChain(t, DevChainConfig{})
	out := callToken(t, d, "DOMAIN_SEPARATOR")
	if got := common.BytesToHash(out).Hex(); got != sepoliaUSDCDomainSeparator {
		t.Fatalf("on-chain DOMAIN_SEPARATOR() = %s, want %s", got, sepoliaUSDCDomainSeparator)
	}
}

// TestDevPaymentWorthlessOnMainnet: a payment signed for a development
// instance (as an official client signs for its 402) verifies there, and
// fails verification by a verifier holding Base mainnet's domain, whether
// the payment is presented as it is or relabelled as a mainnet payment: its
// signature binds the test network's chain id, contract and domain name.
func TestDevPaymentWorthlessOnMainnet(t *testing.T) {
	dev := testRequirement() // the development network, as a dev instance's 402 says
	_, key := DevWallet(1)
	mainnet := dev
	mainnet.Network = "base"
	for _, version := range []int{1, 2} {
		p := makePayment(t, version, dev, key, nil)
		if _, err := VerifyOffline(p, dev, time.Now()); err != nil {
			t.Fatalf("v%d: the payment does not verify on the development network: %v", version, err)
		}
		// Presented as it is, a mainnet verifier refuses its network.
		if _, err := VerifyOffline(p, mainnet, time.Now()); ReasonOf(err) == "" {
			t.Errorf("v%d: a mainnet verifier accepted a development payment", version)
		}
		// Relabelled as a mainnet payment (the same signed authorization
		// and signature in a mainnet envelope), its signature fails.
		forged := paymentFor(t, version, mainnet, parsedAuthorization(p), p.Signature)
		if _, err := VerifyOffline(forged, mainnet, time.Now()); ReasonOf(err) != ReasonSignature {
			t.Errorf("v%d: a development signature in a mainnet envelope: %v, want %s", version, err, ReasonSignature)
		}
	}
}

// parsedAuthorization returns the signed authorization of p.
func parsedAuthorization(p *Payment) authorization { return p.Authorization.parsed() }

func TestTokenViews(t *testing.T) {
	d := newDevChain(t, DevChainConfig{})
	parsed := tokenABI(t)
	for _, tt := range []struct {
		method string
		want   any
	}{
		{"name", "USDC"},
		{"version", "2"},
		{"symbol", "USDC"},
		{"decimals", uint8(6)},
		{"minter", crypto.PubkeyToAddress(keyFromSeed([]byte(DevRelayerSeed)).PublicKey)},
		{"TRANSFER_WITH_AUTHORIZATION_TYPEHASH", [32]byte(transferTypeHash)},
		{"CANCEL_AUTHORIZATION_TYPEHASH", [32]byte(cancelTypeHash)},
	} {
		vals, err := parsed.Unpack(tt.method, callToken(t, d, tt.method))
		if err != nil {
			t.Fatalf("unpack %s: %v", tt.method, err)
		}
		if len(vals) != 1 || vals[0] != tt.want {
			t.Errorf("%s() = %v, want %v", tt.method, vals, tt.want)
		}
	}
}

// TestTransferDigestMatchesAPITypes cross-checks the hand-written EIP-712
// encoding against go-ethereum's generic typed-data hasher.
func TestTransferDigestMatchesAPITypes(t *testing.T) {
	base, _ := LookupNetwork("base")
	a := authorization{
		from:        common.HexToAddress("0x582CF17AFF1B782263b8a85706C10b8dFdD9A600"),
		to:          common.HexToAddress(testPayTo),
		value:       big.NewInt(10000),
		validAfter:  big.NewInt(1763000000),
		validBefore: new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1)),
		nonce:       common.HexToHash("0x" + "ab" + "00112233445566778899aabbccddeeff00112233445566778899aabbccddee"),
	}
	td := apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": {
				{Name: "name", Type: "string"}, {Name: "version", Type: "string"},
				{Name: "chainId", Type: "uint256"}, {Name: "verifyingContract", Type: "address"},
			},
			"TransferWithAuthorization": {
				{Name: "from", Type: "address"}, {Name: "to", Type: "address"}, {Name: "value", Type: "uint256"},
				{Name: "validAfter", Type: "uint256"}, {Name: "validBefore", Type: "uint256"}, {Name: "nonce", Type: "bytes32"},
			},
		},
		PrimaryType: "TransferWithAuthorization",
		Domain: apitypes.TypedDataDomain{
			Name: base.TokenName, Version: base.TokenVersion,
			ChainId: math.NewHexOrDecimal256(base.ChainID), VerifyingContract: base.Asset,
		},
		Message: apitypes.TypedDataMessage{
			"from": a.from.Hex(), "to": a.to.Hex(), "value": a.value.String(),
			"validAfter": a.validAfter.String(), "validBefore": a.validBefore.String(), "nonce": a.nonce.Hex(),
		},
	}
	want, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		t.Fatal(err)
	}
	if got := transferDigest(base, a); !bytes.Equal(got[:], want) {
		t.Fatalf("transferDigest = %x, apitypes = %x", got, want)
	}
}

func TestSignRecoverRoundTrip(t *testing.T) {
	addr, keyHex := DevWallet(2)
	key := mustKey(t, keyHex)
	digest := crypto.Keccak256Hash([]byte("certbank"))
	sig, err := sign(digest, key)
	if err != nil {
		t.Fatal(err)
	}
	if sig[64] != 27 && sig[64] != 28 {
		t.Fatalf("v = %d", sig[64])
	}
	got, err := recoverSigner(digest, sig)
	if err != nil || got.Hex() != addr {
		t.Fatalf("recovered %s, %v; want %s", got.Hex(), err, addr)
	}
}

func tokenABI(t *testing.T) abi.ABI {
	t.Helper()
	var art tokenArtifact
	if err := json.Unmarshal(testTokenJSON, &art); err != nil {
		t.Fatal(err)
	}
	parsed, err := abi.JSON(bytes.NewReader(art.ABI))
	if err != nil {
		t.Fatal(err)
	}
	return parsed
}

// callToken calls a no-argument view of the token on d.
func callToken(t *testing.T, d *DevChain, method string) []byte {
	t.Helper()
	data, err := tokenABI(t).Pack(method)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	asset := common.HexToAddress(d.Network().Asset)
	out, err := d.client.CallContract(ctx, ethereum.CallMsg{To: &asset, Data: data}, nil)
	if err != nil {
		t.Fatalf("call %s: %v", method, err)
	}
	return out
}
