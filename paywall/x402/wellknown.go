package x402

import (
	"fmt"
	"math/big"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// DevPayeeSeed is the published seed of the development payee, the address
// a development instance is paid to when site.yaml names none: its private
// key is keccak256(DevPayeeSeed). Public, development only.
const DevPayeeSeed = "certbank development payee"

// DevPayee returns the development payee's EIP-55 address.
func DevPayee() string {
	return crypto.PubkeyToAddress(keyFromSeed([]byte(DevPayeeSeed)).PublicKey).Hex()
}

// devWalletsChecked is how many development wallets WellKnown recognises.
const devWalletsChecked = 256

// testMnemonicAccounts are the first ten accounts of the mnemonic "test
// test test test test test test test test test test junk" that local EVM
// test nodes fund by default: their private keys are published.
var testMnemonicAccounts = []string{
	"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
	"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
	"0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65", "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc",
	"0x976EA74026E726554dB657fA54763abd0C3a0aa9", "0x14dC79964da2C08b23698B3D3cc7Ca32193d9955",
	"0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f", "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720",
}

// smallKeys is how many of the private keys 1, 2, 3, … WellKnown checks.
const smallKeys = 32

// wellKnown maps a lower-case address whose private key is public (or that
// nobody can spend from) to what it is.
var wellKnown = sync.OnceValue(func() map[string]string {
	m := map[string]string{
		strings.ToLower(common.Address{}.Hex()): "the zero address, which nobody can spend from",
		strings.ToLower(DevPayee()):             "certbank's development payee (its key derives from a published seed)",
		strings.ToLower(crypto.PubkeyToAddress(keyFromSeed([]byte(DevRelayerSeed)).PublicKey).Hex()): "certbank's development relayer (its key derives from a published seed)",
	}
	for i := range devWalletsChecked {
		addr, _ := DevWallet(i)
		m[strings.ToLower(addr)] = fmt.Sprintf("certbank development wallet %d (its key derives from a published seed)", i)
	}
	for i, a := range testMnemonicAccounts {
		m[strings.ToLower(a)] = fmt.Sprintf("account %d of the public test mnemonic \"test test … junk\"", i)
	}
	for k := int64(1); k <= smallKeys; k++ {
		key, err := crypto.ToECDSA(common.LeftPadBytes(big.NewInt(k).Bytes(), 32))
		if err != nil {
			continue
		}
		m[strings.ToLower(crypto.PubkeyToAddress(key.PublicKey).Hex())] = fmt.Sprintf("the address of private key %#x, which anyone can compute", k)
	}
	return m
})

// WellKnown reports whether address is one whose private key is public
// (certbank's development keys, the public test mnemonic's accounts, the
// smallest private keys) or the zero address, and says which. Payments to
// such an address can be taken by anyone.
func WellKnown(address string) (what string, ok bool) {
	what, ok = wellKnown()[strings.ToLower(strings.TrimSpace(address))]
	return what, ok
}
