package certbank_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// The dependency rules of DESIGN.md §2, written as data in the spirit of
// go/build's deps_test.go. This is a statement of policy: do not change it
// to make a build pass; change the code, or change DESIGN.md first.
//
// Package patterns are relative to the module ("." is the root package);
// "x/..." means x and every package below it. Dependency patterns are
// import paths, with the same "/..." suffix.

// onlyFrom lists third-party (or std) packages that only the named packages
// may import directly, counting their test files. Others reach them only
// through those adapters.
var onlyFrom = []struct {
	dep     string
	allowed []string
}{
	{"github.com/ethereum/go-ethereum/...", []string{"paywall/x402/..."}},
	{"modernc.org/sqlite/...", []string{"paywall/sqlite/..."}},
	{"github.com/mattn/go-sqlite3/...", []string{"paywall/sqlite/..."}},
	{"github.com/jackc/pgx/...", []string{"paywall/postgres/..."}},
	{"github.com/lib/pq/...", []string{"paywall/postgres/..."}},
	{"gopkg.in/yaml.v3/...", []string{"generator/...", "verify/..."}},
	{"github.com/gorilla/mux/...", []string{"paywall", "cmd/..."}},
	{"github.com/modelcontextprotocol/go-sdk/...", []string{"paywall/mcpserver/..."}},
}

// never lists packages that must not depend on others at all, directly or
// through any chain of imports (test files: direct imports only).
var never = []struct {
	from, to string
}{
	{"generator/...", "paywall/..."},
	{"paywall/...", "generator/..."},
}

// noDeps lists packages that must not depend on a package outside the
// module (the standard library included), directly or through any chain of
// imports, or only directly when direct is set (test files: direct imports
// only).
var noDeps = []struct {
	from, dep string
	direct    bool
}{
	// The rooms of the service know no HTTP: the doors (paywall,
	// paywall/mcpserver) translate. The ledger reaches net/http only
	// through paywall/x402 (its facilitator client), never itself.
	{"paywall/store/...", "net/http", false},
	{"paywall/bank/...", "net/http", false},
	{"paywall/quota/...", "net/http", false},
	{"paywall/draw/...", "net/http", false},
	{"paywall/learn/...", "net/http", false},
	{"paywall/ledger/...", "net/http", true},
	// The stores reach neither the router nor the MCP SDK.
	{"paywall/sqlite/...", "github.com/gorilla/mux/...", false},
	{"paywall/postgres/...", "github.com/gorilla/mux/...", false},
	{"paywall/storetest/...", "github.com/gorilla/mux/...", false},
	{"paywall/sqlite/...", "github.com/modelcontextprotocol/go-sdk/...", false},
	{"paywall/postgres/...", "github.com/modelcontextprotocol/go-sdk/...", false},
	{"paywall/storetest/...", "github.com/modelcontextprotocol/go-sdk/...", false},
}

// within lists packages that may import, of the module's packages under
// scope, only the allowed ones (and their own sub-packages), directly or
// through any chain of imports (test files: direct imports only).
var within = []struct {
	from    []string
	scope   string
	allowed []string
}{
	// The stores and their conformance suite see only the store contract
	// of paywall.
	{[]string{"paywall/sqlite/...", "paywall/postgres/...", "paywall/storetest/..."}, "paywall/...", []string{"paywall/store", "paywall/storetest"}},
}

// stdOnly lists packages that may import only the standard library,
// directly or indirectly, tests included.
var stdOnly = []string{"."}

// pkg is what the policy needs of `go list -json` output.
type pkg struct {
	ImportPath   string
	Standard     bool
	Module       *struct{ Path string }
	Imports      []string
	TestImports  []string
	XTestImports []string
	Deps         []string
	Error        *struct{ Err string }
}

func TestDependencyPolicy(t *testing.T) {
	// -deps lists every package the module's packages need (std and
	// third-party included, with their Standard flag); -e keeps going when a
	// package does not build, so the policy is checked even then.
	cmd := exec.Command("go", "list", "-e", "-deps", "-json=ImportPath,Standard,Module,Imports,TestImports,XTestImports,Deps,Error", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	pkgs, err := decodePackages(out)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	module := strings.TrimSpace(string(mod))
	for _, want := range []string{".", "generator", "paywall", "paywall/x402", "paywall/store", "paywall/bank", "paywall/quota", "paywall/draw", "paywall/mcpserver", "paywall/sqlite"} {
		if _, ok := pkgs[join(module, want)]; !ok {
			t.Fatalf("go list did not list %s; the policy would check nothing", join(module, want))
		}
	}
	for _, v := range violations(module, pkgs) {
		t.Error(v)
	}
	for _, p := range pkgs {
		if p.Error != nil && strings.HasPrefix(p.ImportPath, module) {
			t.Logf("note: %s does not load (%s); its imports were still checked", p.ImportPath, strings.TrimSpace(p.Error.Err))
		}
	}
}

// TestDependencyPolicyCatches feeds the checker a graph that breaks every
// rule, so a broken checker cannot pass silently.
func TestDependencyPolicyCatches(t *testing.T) {
	const m = "example.com/bank"
	std := func(path string) *pkg { return &pkg{ImportPath: path, Standard: true} }
	own := func(path string, imports []string, deps []string, test ...string) *pkg {
		return &pkg{ImportPath: path, Module: &struct{ Path string }{m}, Imports: imports, Deps: deps, XTestImports: test}
	}
	pkgs := map[string]*pkg{
		"fmt":                                    std("fmt"),
		"gopkg.in/yaml.v3":                       {ImportPath: "gopkg.in/yaml.v3"},
		"github.com/ethereum/go-ethereum/crypto": {ImportPath: "github.com/ethereum/go-ethereum/crypto"},
		"github.com/gorilla/mux":                 {ImportPath: "github.com/gorilla/mux"},
		"modernc.org/sqlite":                     {ImportPath: "modernc.org/sqlite"},
		m:                                        own(m, []string{"fmt", "gopkg.in/yaml.v3"}, []string{"fmt", "gopkg.in/yaml.v3"}),
		m + "/generator":                         own(m+"/generator", []string{m + "/paywall"}, []string{m + "/paywall", m + "/paywall/x402"}),
		m + "/paywall":                           own(m+"/paywall", []string{"github.com/ethereum/go-ethereum/crypto"}, nil, m+"/generator"),
		m + "/paywall/x402":                      own(m+"/paywall/x402", []string{"github.com/ethereum/go-ethereum/crypto", "modernc.org/sqlite"}, nil),
		m + "/paywall/sqlite":                    own(m+"/paywall/sqlite", []string{"github.com/gorilla/mux"}, []string{"github.com/gorilla/mux", m + "/paywall", m + "/paywall/store"}),
		m + "/paywall/quota":                     own(m+"/paywall/quota", []string{"fmt"}, []string{"fmt", "net/http"}),
		m + "/paywall/ledger":                    own(m+"/paywall/ledger", []string{"net/http", m + "/paywall/x402"}, []string{"net/http", m + "/paywall/x402"}),
		"net/http":                               std("net/http"),
	}
	got := strings.Join(violations(m, pkgs), "\n")
	for _, want := range []string{
		m + " imports gopkg.in/yaml.v3",                               // root: std only, and yaml outside its adapters
		m + "/generator depends on " + m + "/paywall",                 // never
		m + "/generator depends on " + m + "/paywall/x402",            // never, transitively
		m + "/paywall (tests) import " + m + "/generator",             // never, test imports
		m + "/paywall imports github.com/ethereum/go-ethereum/crypto", // only from paywall/x402
		m + "/paywall/x402 imports modernc.org/sqlite",                // only from paywall/sqlite
		m + "/paywall/sqlite imports github.com/gorilla/mux",          // only from paywall and cmd
		m + "/paywall/quota depends on net/http",                      // noDeps: the rooms know no HTTP
		m + "/paywall/ledger depends on net/http",                     // noDeps, direct: the ledger never imports it
		m + "/paywall/sqlite depends on github.com/gorilla/mux",       // noDeps: stores never reach the router
		m + "/paywall/sqlite depends on " + m + "/paywall;",           // within: only paywall/store
	} {
		if !strings.Contains(got, want) {
			t.Errorf("violations lack %q; got:\n%s", want, got)
		}
	}
	for _, allowed := range []string{m + "/paywall/x402 imports github.com/ethereum", m + "/paywall/sqlite depends on " + m + "/paywall/store"} {
		if strings.Contains(got, allowed) {
			t.Errorf("violations wrongly include %q", allowed)
		}
	}
}

func decodePackages(data []byte) (map[string]*pkg, error) {
	pkgs := map[string]*pkg{}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		p := new(pkg)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("decode go list output: %w", err)
		}
		pkgs[p.ImportPath] = p
	}
}

func join(module, rel string) string {
	if rel == "." {
		return module
	}
	return module + "/" + rel
}

// match reports whether import path p matches pattern, which may end in
// "/..." to include everything below it.
func match(pattern, p string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}

// violations returns every edge of the module's packages that breaks the
// policy, sorted.
func violations(module string, pkgs map[string]*pkg) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	isStd := func(path string) bool {
		if p, ok := pkgs[path]; ok {
			return p.Standard
		}
		// Not listed (only test imports are missing from -deps): std paths
		// have no dot in their first element.
		first, _, _ := strings.Cut(path, "/")
		return !strings.Contains(first, ".")
	}
	for _, p := range pkgs {
		if p.Module == nil || p.Module.Path != module {
			continue
		}
		tests := append(append([]string{}, p.TestImports...), p.XTestImports...)
		for _, rule := range onlyFrom {
			ok := false
			for _, a := range rule.allowed {
				if match(join(module, a), p.ImportPath) {
					ok = true
				}
			}
			if ok {
				continue
			}
			for _, imp := range p.Imports {
				if match(rule.dep, imp) {
					add("%s imports %s, which only %s may import (DESIGN.md §2)", p.ImportPath, imp, strings.Join(rule.allowed, ", "))
				}
			}
			for _, imp := range tests {
				if match(rule.dep, imp) {
					add("%s (tests) import %s, which only %s may import (DESIGN.md §2)", p.ImportPath, imp, strings.Join(rule.allowed, ", "))
				}
			}
		}
		for _, rule := range never {
			if !match(join(module, rule.from), p.ImportPath) {
				continue
			}
			to := join(module, rule.to)
			for _, d := range p.Deps {
				if match(to, d) {
					add("%s depends on %s; %s and %s never import each other (DESIGN.md §2)", p.ImportPath, d, rule.from, rule.to)
				}
			}
			for _, imp := range tests {
				if match(to, imp) && !match(join(module, rule.from), imp) {
					add("%s (tests) import %s; %s and %s never import each other (DESIGN.md §2)", p.ImportPath, imp, rule.from, rule.to)
				}
			}
		}
		for _, rule := range noDeps {
			if !match(join(module, rule.from), p.ImportPath) {
				continue
			}
			deps := p.Deps
			if rule.direct {
				deps = p.Imports
			}
			for _, d := range append(append([]string{}, deps...), tests...) {
				if match(rule.dep, d) {
					add("%s depends on %s, which %s never reaches (DESIGN.md §2)", p.ImportPath, d, rule.from)
				}
			}
		}
		for _, rule := range within {
			from := false
			for _, f := range rule.from {
				from = from || match(join(module, f), p.ImportPath)
			}
			if !from {
				continue
			}
			for _, d := range append(append([]string{}, p.Deps...), tests...) {
				if !match(join(module, rule.scope), d) || strings.HasPrefix(d+"/", p.ImportPath+"/") {
					continue
				}
				ok := false
				for _, a := range rule.allowed {
					ok = ok || d == join(module, a)
				}
				if !ok {
					add("%s depends on %s; of %s it may import only %s (DESIGN.md §2)", p.ImportPath, d, rule.scope, strings.Join(rule.allowed, ", "))
				}
			}
		}
		for _, s := range stdOnly {
			if p.ImportPath != join(module, s) {
				continue
			}
			for _, d := range append(append([]string{}, p.Deps...), tests...) {
				if !isStd(d) && d != p.ImportPath {
					add("%s imports %s; the root package imports only the standard library (DESIGN.md §2)", p.ImportPath, d)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
