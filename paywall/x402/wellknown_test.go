package x402

import (
	"strings"
	"testing"
)

func TestWellKnown(t *testing.T) {
	wallet0, _ := DevWallet(0)
	wallet200, _ := DevWallet(200)
	tests := []struct {
		addr string
		want string // "" means not well known
	}{
		{"0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf", "private key 0x1"}, // what site.yaml used to ship
		{"0x7e5f4552091a69125d5dfcb7b8c2659029395bdf", "private key 0x1"}, // any case
		{"0x2B5AD5c4795c026514f8317c7a215E218DcCD6cF", "private key 0x2"},
		{"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "test mnemonic"},
		{"0xa0Ee7A142d267C1f36714E4a8F75612F20a79720", "test mnemonic"},
		{"0x0000000000000000000000000000000000000000", "zero address"},
		{wallet0, "development wallet 0"},
		{wallet200, "development wallet 200"},
		{DevPayee(), "development payee"},
		{testPayTo, ""},
		{"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", ""},
	}
	for _, tt := range tests {
		what, ok := WellKnown(tt.addr)
		if ok != (tt.want != "") || !strings.Contains(what, tt.want) {
			t.Errorf("WellKnown(%s) = %q, %v; want %q", tt.addr, what, ok, tt.want)
		}
	}
	if DevPayee() == wallet0 || !strings.HasPrefix(DevPayee(), "0x") || len(DevPayee()) != 42 {
		t.Errorf("DevPayee() = %s", DevPayee())
	}
}
