package x402

import (
	"strings"

	"github.com/certbank/certbank"
)

// Network is one chain and its USDC token, as x402 names them.
type Network struct {
	// Name is the x402 version 1 network name, e.g. "base".
	Name string
	// Aliases are other names accepted in configuration and incoming
	// payments, never written on the wire, e.g. "base-mainnet".
	Aliases []string
	// CAIP2 is the x402 version 2 network id, e.g. "eip155:8453".
	CAIP2 string
	// ChainID is the EIP-155 chain id.
	ChainID int64
	// Asset is the EIP-55 address of the network's USDC contract.
	Asset string
	// TokenName and TokenVersion are the token's EIP-712 domain name and
	// version, sent to clients as extra.name and extra.version. They differ
	// between chains: Base mainnet USDC signs as "USD Coin", Base Sepolia
	// USDC as "USDC".
	TokenName    string
	TokenVersion string
	// Decimals is the number of decimals of the token (6 for USDC).
	Decimals int
}

// Networks returns the supported networks: Base mainnet and Base Sepolia,
// from the domain's table (certbank.Networks).
func Networks() []Network {
	out := make([]Network, len(certbank.Networks))
	for i, n := range certbank.Networks {
		out[i] = Network{Name: n.Name, Aliases: n.Aliases, CAIP2: n.CAIP2, ChainID: n.ChainID, Asset: n.Asset,
			TokenName: n.TokenName, TokenVersion: n.TokenVersion, Decimals: n.Decimals}
	}
	return out
}

// LookupNetwork finds a network by version 1 name ("base"), alias
// ("base-mainnet") or CAIP-2 id ("eip155:8453"). Names are compared without
// regard to case.
func LookupNetwork(name string) (Network, bool) {
	for _, n := range Networks() {
		if n.is(name) {
			return n, true
		}
	}
	return Network{}, false
}

func (n Network) is(name string) bool {
	if strings.EqualFold(name, n.Name) || strings.EqualFold(name, n.CAIP2) {
		return true
	}
	for _, a := range n.Aliases {
		if strings.EqualFold(name, a) {
			return true
		}
	}
	return false
}

// wireName returns the network identifier used on the wire by version.
func (n Network) wireName(version int) string {
	if version == 2 {
		return n.CAIP2
	}
	return n.Name
}
