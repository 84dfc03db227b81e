package x402

import (
	"crypto/ecdsa"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// The EIP-712 type hashes of FiatToken's EIP-3009 (TestUSDC uses the same).
// eip712_test.go checks them against keccak256 of the type strings.
var (
	// keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
	domainTypeHash = common.HexToHash("0x8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f")
	// keccak256("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)")
	transferTypeHash = common.HexToHash("0x7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267")
	// keccak256("CancelAuthorization(address authorizer,bytes32 nonce)")
	cancelTypeHash = common.HexToHash("0x158b0a9edf7a828aad02f63cd515c68ef2f50ba807396f6d12842833a1597429")
)

// secp256k1HalfN is half the order of secp256k1. Signatures with a larger s
// are malleable; FiatToken rejects them.
var secp256k1HalfN = new(big.Int).Rsh(crypto.S256().Params().N, 1)

// domainSeparator is the EIP-712 domain separator of n's USDC token:
// keccak256(abi.encode(typeHash, keccak256(name), keccak256(version),
// chainId, verifyingContract)).
func domainSeparator(n Network) common.Hash {
	var buf [5 * 32]byte
	copy(buf[0:], domainTypeHash[:])
	copy(buf[32:], crypto.Keccak256([]byte(n.TokenName)))
	copy(buf[64:], crypto.Keccak256([]byte(n.TokenVersion)))
	binary.BigEndian.PutUint64(buf[96+24:], uint64(n.ChainID))
	asset := common.HexToAddress(n.Asset)
	copy(buf[128+12:], asset[:])
	return crypto.Keccak256Hash(buf[:])
}

// authorization is the parsed, typed form of an Authorization.
type authorization struct {
	from, to                       common.Address
	value, validAfter, validBefore *big.Int
	nonce                          common.Hash
}

// transferDigest is the EIP-712 digest a payer signs for
// TransferWithAuthorization: keccak256(0x1901 ‖ domainSeparator ‖ structHash).
func transferDigest(n Network, a authorization) common.Hash {
	var buf [7 * 32]byte
	copy(buf[0:], transferTypeHash[:])
	copy(buf[32+12:], a.from[:])
	copy(buf[64+12:], a.to[:])
	a.value.FillBytes(buf[96:128])
	a.validAfter.FillBytes(buf[128:160])
	a.validBefore.FillBytes(buf[160:192])
	copy(buf[192:], a.nonce[:])
	return typedDataDigest(domainSeparator(n), crypto.Keccak256Hash(buf[:]))
}

// cancelDigest is the EIP-712 digest an authorizer signs for
// CancelAuthorization.
func cancelDigest(n Network, authorizer common.Address, nonce common.Hash) common.Hash {
	var buf [3 * 32]byte
	copy(buf[0:], cancelTypeHash[:])
	copy(buf[32+12:], authorizer[:])
	copy(buf[64:], nonce[:])
	return typedDataDigest(domainSeparator(n), crypto.Keccak256Hash(buf[:]))
}

func typedDataDigest(domain, structHash common.Hash) common.Hash {
	var buf [2 + 32 + 32]byte
	buf[0], buf[1] = 0x19, 0x01
	copy(buf[2:], domain[:])
	copy(buf[34:], structHash[:])
	return crypto.Keccak256Hash(buf[:])
}

// recoverSigner returns the address that produced the 65-byte r‖s‖v
// signature sig over digest. v may be 27/28 or 0/1; s must be in the lower
// half order, as the token requires. Longer signatures (ERC-1271, ERC-6492
// smart wallets) are refused with a clear message.
func recoverSigner(digest common.Hash, sig []byte) (common.Address, error) {
	switch {
	case len(sig) > 65:
		return common.Address{}, newError(ReasonSignature,
			"smart-wallet signatures are not supported yet: the signature is longer than 65 bytes; pay from an externally owned account (a plain private key)")
	case len(sig) < 65:
		return common.Address{}, newError(ReasonSignature,
			fmt.Sprintf("the signature is %d bytes; an EOA signature is exactly 65 bytes (r, s, v)", len(sig)))
	}
	v := sig[64]
	if v >= 27 {
		v -= 27
	}
	if v > 1 {
		return common.Address{}, newError(ReasonSignature,
			fmt.Sprintf("the signature's v byte is %d; it must be 27 or 28 (or 0 or 1)", sig[64]))
	}
	s := new(big.Int).SetBytes(sig[32:64])
	if s.Cmp(secp256k1HalfN) > 0 {
		return common.Address{}, newError(ReasonSignature,
			"the signature has a high s value, which the token rejects as malleable; sign with a library that normalises s (every current wallet does)")
	}
	r := new(big.Int).SetBytes(sig[:32])
	if !crypto.ValidateSignatureValues(v, r, s, true) {
		return common.Address{}, newError(ReasonSignature, "the signature's r or s value is out of range")
	}
	var norm [65]byte
	copy(norm[:], sig)
	norm[64] = v
	pub, err := crypto.Ecrecover(digest[:], norm[:])
	if err != nil {
		return common.Address{}, wrapError(ReasonSignature, "the signature does not recover to any address", err)
	}
	var addr common.Address
	copy(addr[:], crypto.Keccak256(pub[1:])[12:])
	return addr, nil
}

// sign signs digest with key and returns r‖s‖v with v of 27 or 28, as
// wallets and the token expect.
func sign(digest common.Hash, key *ecdsa.PrivateKey) ([]byte, error) {
	sig, err := crypto.Sign(digest[:], key)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	sig[64] += 27
	return sig, nil
}

// parsePrivateKey parses a hex secp256k1 private key, with or without 0x.
func parsePrivateKey(s string) (*ecdsa.PrivateKey, error) {
	key, err := crypto.HexToECDSA(strings.TrimPrefix(strings.TrimSpace(s), "0x"))
	if err != nil {
		return nil, fmt.Errorf("private key is not 32 bytes of hex: %w", err)
	}
	return key, nil
}

// formatPrivateKey formats key as 0x-prefixed hex.
func formatPrivateKey(key *ecdsa.PrivateKey) string {
	return "0x" + hex.EncodeToString(crypto.FromECDSA(key))
}

// isHexAddress reports whether s is 0x followed by 40 hex digits.
func isHexAddress(s string) bool {
	return len(s) == 42 && hasHexPrefix(s) && isHex(s[2:])
}

func isZeroAddress(s string) bool {
	return common.HexToAddress(s) == common.Address{}
}

// checksumAddress returns the EIP-55 form of a hex address, or s unchanged if
// it is not one.
func checksumAddress(s string) string {
	if !isHexAddress(s) {
		return s
	}
	return common.HexToAddress(s).Hex()
}

func hasHexPrefix(s string) bool { return len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') }

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
