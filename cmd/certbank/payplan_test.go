package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/x402"
)

// own is an address whose key nobody published (a payee of the operator's own).
const own = "0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c"

func TestPlanPayment(t *testing.T) {
	site := func(network, payTo string) *certbank.Site {
		return &certbank.Site{Payment: certbank.Payment{Network: network, PayTo: payTo}}
	}
	dev, _ := x402.DevWallet(0)
	cases := []struct {
		name       string
		flags      payFlags
		site       *certbank.Site
		wantPayTo  string
		wantUnsafe string // substring of an Unsafe entry; "" means safe
		wantDev    bool
	}{
		{"development default: test network, development payee", payFlags{}, site("base-sepolia", ""), x402.DevPayee(), "", true},
		{"development chain refuses to pose as mainnet", payFlags{}, site("base", ""), x402.DevPayee(), "a mainnet, but no real settlement backend", true},
		{"mainnet without a payee", payFlags{chainRPC: "http://127.0.0.1:8545"}, site("base", ""), "", "no payee", false},
		{"mainnet paying private key 1", payFlags{chainRPC: "http://127.0.0.1:8545"}, site("base", "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf"), "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf", "private key 0x1", false},
		{"mainnet paying a development wallet", payFlags{facilitator: "https://f.example"}, site("base", dev), dev, "development wallet 0", false},
		{"mainnet paying the development payee", payFlags{facilitator: "https://f.example"}, site("base", x402.DevPayee()), x402.DevPayee(), "development payee", false},
		{"mainnet paying a test-mnemonic account", payFlags{facilitator: "https://f.example"}, site("base", "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"), "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "test mnemonic", false},
		{"mainnet paying the zero address", payFlags{facilitator: "https://f.example"}, site("base", "0x0000000000000000000000000000000000000000"), "0x0000000000000000000000000000000000000000", "zero address", false},
		{"mainnet with an own payee is safe", payFlags{facilitator: "https://f.example"}, site("base", own), own, "", false},
		{"--pay-to overrides site.yaml", payFlags{facilitator: "https://f.example", payTo: own}, site("base", "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf"), own, "", false},
		{"malformed payee", payFlags{facilitator: "https://f.example", payTo: "0x1234"}, site("base", ""), "0x1234", "not a 0x-prefixed", false},
		{"a real backend on the test network refuses a public payee", payFlags{chainRPC: "http://127.0.0.1:8545"}, site("base-sepolia", x402.DevPayee()), x402.DevPayee(), "development payee", false},
		{"a real backend on the test network needs a payee", payFlags{chainRPC: "http://127.0.0.1:8545"}, site("base-sepolia", ""), "", "no payee", false},
		{"unknown network", payFlags{}, site("ethereum", ""), x402.DevPayee(), "not supported", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pl := planPayment(c.flags, c.site)
			if pl.PayTo != c.wantPayTo || pl.Dev != c.wantDev {
				t.Errorf("payee %q dev %v; want %q dev %v", pl.PayTo, pl.Dev, c.wantPayTo, c.wantDev)
			}
			unsafe := strings.Join(pl.Unsafe, "\n")
			switch {
			case c.wantUnsafe == "" && unsafe != "":
				t.Errorf("unsafe: %s; want safe", unsafe)
			case c.wantUnsafe != "" && !strings.Contains(unsafe, c.wantUnsafe):
				t.Errorf("unsafe: %q; want it to mention %q", unsafe, c.wantUnsafe)
			}
			var out bytes.Buffer
			pl.write(&out)
			if (c.wantUnsafe == "") != strings.Contains(out.String(), "safe     yes") {
				t.Errorf("printed plan disagrees with Unsafe:\n%s", out.String())
			}
		})
	}
}

func TestBuildPayee(t *testing.T) {
	cases := []struct {
		network, yaml, flag string
		want, wantErr       string
	}{
		{"base-sepolia", "", "", x402.DevPayee(), ""},
		{"base-sepolia", own, "", own, ""},
		{"base", "", "", "", "no payee"},
		{"base", "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf", "", "", "private key 0x1"},
		{"base", "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf", own, own, ""},
		{"base", "nope", "", "", "not a 0x-prefixed"},
	}
	for _, c := range cases {
		s := &certbank.Site{Payment: certbank.Payment{Network: c.network, PayTo: c.yaml}}
		got, err := buildPayee(c.flag, s)
		if got != c.want || (err == nil) != (c.wantErr == "") || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("buildPayee(%q, %s %q) = %q, %v; want %q, error %q", c.flag, c.network, c.yaml, got, err, c.want, c.wantErr)
		}
	}
}

func TestPublicURLs(t *testing.T) {
	listen := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 18282}
	any := &net.TCPAddr{IP: net.IPv6unspecified, Port: 9090}
	local := &certbank.Site{BaseURL: "http://127.0.0.1:8080", FunctionsURL: "http://127.0.0.1:8080", MCPURL: "http://localhost:8080"}
	public := &certbank.Site{BaseURL: "https://certbank.example", FunctionsURL: "https://api.certbank.example", MCPURL: "https://mcp.certbank.example"}
	cases := []struct {
		name   string
		o      serveOptions
		site   *certbank.Site
		listen net.Addr
		want   urls
	}{
		{"loopback defaults follow the listen address", serveOptions{}, local, listen, urls{"http://127.0.0.1:18282", "http://127.0.0.1:18282", "http://127.0.0.1:18282"}},
		{"an unspecified listen host is reached on 127.0.0.1", serveOptions{}, local, any, urls{"http://127.0.0.1:9090", "http://127.0.0.1:9090", "http://127.0.0.1:9090"}},
		{"public URLs stay", serveOptions{}, public, listen, urls{"https://certbank.example", "https://api.certbank.example", "https://mcp.certbank.example"}},
		{"--base-url sets all three", serveOptions{baseURL: "https://x.example/"}, local, listen, urls{"https://x.example", "https://x.example", "https://x.example"}},
		{"--mcp-url alone", serveOptions{mcpURL: "https://m.example"}, local, listen, urls{"http://127.0.0.1:18282", "http://127.0.0.1:18282", "https://m.example"}},
	}
	for _, c := range cases {
		if got := publicURLs(c.o, c.site, c.listen); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

// serve --check prints the payment setup and exits 3 when serve would
// refuse to start; serve itself refuses before it listens.
func TestServeCheck(t *testing.T) {
	content := copyContent(t)
	r := cli(t, nil, "serve", "--check", "--content", content)
	if r.code != exitOK || !strings.Contains(r.stdout, "base-sepolia") || !strings.Contains(r.stdout, "safe     yes") {
		t.Fatalf("serve --check on the development defaults: %+v", r)
	}
	site := filepath.Join(content, "site.yaml")
	src, _ := os.ReadFile(site)
	os.WriteFile(site, bytes.Replace(src, []byte("network: base-sepolia"), []byte("network: base"), 1), 0o644)
	r = cli(t, nil, "serve", "--check", "--content", content)
	if r.code != exitContent || !strings.Contains(r.stdout, "UNSAFE") || !strings.Contains(r.stdout, "no real settlement backend") {
		t.Errorf("serve --check on mainnet without a backend: %+v", r)
	}
	r = cli(t, nil, "serve", "--content", content, "--addr", "127.0.0.1:0")
	if r.code != exitUsage || !strings.Contains(r.stderr, "refusing to start") {
		t.Errorf("serve on mainnet without a backend: %+v", r)
	}
	env := map[string]string{"CERTBANK_PAY_TO": "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf"}
	r = cli(t, env, "serve", "--check", "--content", content, "--facilitator", "https://facilitator.example")
	if r.code != exitContent || !strings.Contains(r.stdout, "private key 0x1") {
		t.Errorf("serve --check paying private key 1 on mainnet: %+v", r)
	}
	r = cli(t, map[string]string{"CERTBANK_PAY_TO": own}, "serve", "--check", "--content", content, "--facilitator", "https://facilitator.example")
	if r.code != exitOK || !strings.Contains(r.stdout, own) {
		t.Errorf("serve --check with an own payee on mainnet: %+v", r)
	}
	// The shipped site.yaml (test network, no pay_to) with a real backend.
	shipped := t.TempDir()
	os.WriteFile(filepath.Join(shipped, "site.yaml"), must(os.ReadFile("../../content/site.yaml")), 0o644)
	os.CopyFS(filepath.Join(shipped, "certifications"), os.DirFS(filepath.Join(content, "certifications")))
	r = cli(t, nil, "serve", "--content", shipped, "--chain-rpc", "http://127.0.0.1:1", "--addr", "127.0.0.1:0")
	if r.code != exitUsage || !strings.Contains(r.stderr, "refusing to start") || !strings.Contains(r.stderr, "--pay-to") {
		t.Errorf("serve --chain-rpc with the shipped site.yaml: %+v", r)
	}
	// build: a mainnet site needs a payee of the operator's own.
	out := t.TempDir()
	r = cli(t, env, "build", "--content", content, "--out", filepath.Join(out, "public"), "--bank", filepath.Join(out, "bank.json"))
	if r.code != exitUsage || !strings.Contains(r.stderr, "private key 0x1") {
		t.Errorf("build of a mainnet site with a public payee: %+v", r)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
