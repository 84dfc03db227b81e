package certbank

import "strings"

// Network is a chain on which pay-per-request settles, with its USDC
// contract. The EIP-712 domain name differs per chain: Base mainnet USDC
// signs as "USD Coin", Base Sepolia USDC as "USDC".
type Network struct {
	Name         string   // x402 v1 network name, e.g. "base"
	Aliases      []string // other accepted names, never written on the wire
	CAIP2        string   // x402 v2 network id, e.g. "eip155:8453"
	ChainID      int64
	Asset        string // USDC contract address, EIP-55 checksummed
	TokenName    string // EIP-712 domain name of the USDC contract
	TokenVersion string // EIP-712 domain version
	Decimals     int
}

// Networks are the supported payment networks.
var Networks = []Network{
	{Name: "base", Aliases: []string{"base-mainnet"}, CAIP2: "eip155:8453", ChainID: 8453, Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", TokenName: "USD Coin", TokenVersion: "2", Decimals: 6},
	{Name: "base-sepolia", CAIP2: "eip155:84532", ChainID: 84532, Asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", TokenName: "USDC", TokenVersion: "2", Decimals: 6},
}

// LookupNetwork returns the network with the given v1 name or CAIP-2 id;
// "base-mainnet" is accepted as an alias of "base".
func LookupNetwork(name string) (Network, bool) {
	for _, n := range Networks {
		if strings.EqualFold(n.Name, name) || strings.EqualFold(n.CAIP2, name) {
			return n, true
		}
		for _, a := range n.Aliases {
			if strings.EqualFold(a, name) {
				return n, true
			}
		}
	}
	return Network{}, false
}
