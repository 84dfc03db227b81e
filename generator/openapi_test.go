package generator_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// openAPIValidator is the Node project that runs a real OpenAPI 3.1 schema
// validator (@seriousme/openapi-schema-validator); `npm ci` in it installs it.
const openAPIValidator = "../tools/openapi-validate"

// requireNode says whether a missing node or node_modules fails the test
// instead of skipping it (CI sets it).
func requireNode() bool { return os.Getenv("CERTBANK_REQUIRE_NODE_TESTS") == "1" }

// validatorCmd returns the node command that validates file, or skips (or
// fails, under CERTBANK_REQUIRE_NODE_TESTS=1) when it cannot run here.
func validatorCmd(t *testing.T, file string) *exec.Cmd {
	t.Helper()
	node, err := exec.LookPath("node")
	missing := ""
	switch {
	case err != nil:
		missing = "node is not on PATH"
	default:
		if _, err := os.Stat(filepath.Join(openAPIValidator, "node_modules", "@seriousme", "openapi-schema-validator")); err != nil {
			missing = "the validator is not installed; run: npm ci --prefix tools/openapi-validate"
		}
	}
	if missing != "" {
		if requireNode() {
			t.Fatalf("CERTBANK_REQUIRE_NODE_TESTS=1 but %s", missing)
		}
		t.Skip(missing)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "validate.mjs", abs)
	cmd.Dir = openAPIValidator
	return cmd
}

// TestOpenAPIValidates runs the OpenAPI 3.1 validator on the built
// openapi.json, and on a broken copy to show that it does reject.
func TestOpenAPIValidates(t *testing.T) {
	t.Parallel()
	_, out := buildFixture(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(good, out.Files["openapi.json"], 0o644); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(out.Files["openapi.json"], &doc); err != nil {
		t.Fatal(err)
	}
	x402 := doc["paths"].(map[string]any)["/api/v1/x402"].(map[string]any)["get"].(map[string]any)
	x402["responses"] = "none" // responses must be an object
	broken, _ := json.Marshal(doc)
	bad := filepath.Join(dir, "broken.json")
	if err := os.WriteFile(bad, broken, 0o644); err != nil {
		t.Fatal(err)
	}

	// Node takes a moment to start; run both at once.
	var goodOut, badOut bytes.Buffer
	goodCmd, badCmd := validatorCmd(t, good), validatorCmd(t, bad)
	goodCmd.Stdout, goodCmd.Stderr = &goodOut, &goodOut
	badCmd.Stdout, badCmd.Stderr = &badOut, &badOut
	if err := goodCmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := badCmd.Start(); err != nil {
		t.Fatal(err)
	}
	goodErr, badErr := goodCmd.Wait(), badCmd.Wait()
	if goodErr != nil {
		t.Errorf("openapi.json is not valid OpenAPI 3.1: %v\n%s", goodErr, goodOut.Bytes())
	}
	data := badOut.Bytes()
	if badErr == nil {
		t.Fatalf("the validator accepted a document whose responses is a string:\n%s", data)
	}
	if !strings.Contains(string(data), "responses") {
		t.Errorf("the validator's errors do not name the broken member:\n%s", data)
	}
}

// TestOpenAPIDocument checks the Go-side promises of the OpenAPI document:
// version, and every dynamic endpoint of SPEC.md §4 with its key details.
func TestOpenAPIDocument(t *testing.T) {
	c, out := buildFixture(t)
	if !bytes.Equal(out.Files["openapi.json"], out.Files[".well-known/openapi.json"]) {
		t.Error("/.well-known/openapi.json differs from /openapi.json")
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
		Info    struct {
			Version string `json:"version"`
			Title   string `json:"title"`
		} `json:"info"`
		Servers []struct {
			URL string `json:"url"`
		} `json:"servers"`
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Parameters  []struct {
				Name     string `json:"name"`
				In       string `json:"in"`
				Required bool   `json:"required"`
				Schema   struct {
					Enum []any `json:"enum"`
				} `json:"schema"`
			} `json:"parameters"`
			Responses   map[string]json.RawMessage `json:"responses"`
			PaymentInfo map[string]any             `json:"x-payment-info"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(out.Files["openapi.json"], &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	if doc.Info.Version != "1.0.0" {
		t.Errorf("info.version = %q, want 1.0.0 (SPEC.md §9)", doc.Info.Version)
	}
	var servers []string
	for _, s := range doc.Servers {
		servers = append(servers, s.URL)
	}
	for _, want := range []string{strings.TrimRight(c.Site.BaseURL, "/"), strings.TrimRight(c.Site.FunctionsURL, "/")} {
		if !slices.Contains(servers, want) {
			t.Errorf("servers %v lack %s", servers, want)
		}
	}

	endpoints := []struct{ path, method string }{
		{"/api/v1/x402", "get"},
		{"/api/v1/questions", "get"},
		{"/functions/v1/api-v1-questions", "get"},
		{"/functions/v1/api-v1-certifications", "get"},
		{"/functions/v1/api-v1-usage", "get"},
		{"/api/v1/certifications", "get"},
		{"/api/v1/usage", "get"},
		{"/api/v1/signup", "post"},
		{"/api/v1/export", "get"},
		{"/api/mcp", "post"},
	}
	for _, e := range endpoints {
		op, ok := doc.Paths[e.path][e.method]
		if !ok {
			t.Errorf("%s %s is missing", strings.ToUpper(e.method), e.path)
			continue
		}
		if op.OperationID == "" || len(op.Responses) == 0 {
			t.Errorf("%s %s has no operationId or no responses", strings.ToUpper(e.method), e.path)
		}
	}

	x402 := doc.Paths["/api/v1/x402"]["get"]
	params := map[string]int{}
	for i, p := range x402.Parameters {
		params[p.Name] = i
	}
	var slugs []any
	for _, cert := range c.Certifications {
		slugs = append(slugs, cert.Slug)
	}
	for _, want := range []struct {
		name     string
		required bool
		enum     []any
	}{
		{"certification", true, slugs},
		{"limit", true, []any{10.0, 25.0, 50.0}},
		{"difficulty", false, []any{"easy", "medium", "hard"}},
		{"include_answer", false, nil},
	} {
		i, ok := params[want.name]
		if !ok {
			t.Errorf("GET /api/v1/x402 lacks the %s parameter", want.name)
			continue
		}
		p := x402.Parameters[i]
		if p.In != "query" || p.Required != want.required {
			t.Errorf("x402 parameter %s: in %s, required %v; want query, %v", want.name, p.In, p.Required, want.required)
		}
		if want.enum != nil && !slices.Equal(p.Schema.Enum, want.enum) {
			t.Errorf("x402 parameter %s: enum %v, want %v", want.name, p.Schema.Enum, want.enum)
		}
	}
	if _, ok := params["X-PAYMENT"]; !ok {
		t.Error("GET /api/v1/x402 does not document the X-PAYMENT header")
	}
	for _, code := range []string{"200", "400", "402", "500"} {
		if _, ok := x402.Responses[code]; !ok {
			t.Errorf("GET /api/v1/x402 lacks the %s response", code)
		}
	}
	if !strings.Contains(string(x402.Responses["402"]), "#/components/schemas/PaymentRequired") {
		t.Errorf("the 402 response does not use the PaymentRequired schema: %s", x402.Responses["402"])
	}
	pi := x402.PaymentInfo
	if pi == nil {
		t.Fatal("GET /api/v1/x402 has no x-payment-info")
	}
	if pi["network"] != c.Site.Payment.Network || pi["payTo"] != c.Site.Payment.PayTo || pi["currency"] != "USDC" {
		t.Errorf("x-payment-info: network %v, payTo %v, currency %v; want %s, %s, USDC", pi["network"], pi["payTo"], pi["currency"], c.Site.Payment.Network, c.Site.Payment.PayTo)
	}
	prices, _ := json.Marshal(pi["prices"])
	for _, want := range []string{`"include_answer_true":"10000"`, `"include_answer_false":"7000"`, `"include_answer_true":"40000"`, `"include_answer_false":"28000"`} {
		if !strings.Contains(string(prices), want) {
			t.Errorf("x-payment-info.prices %s lacks %s", prices, want)
		}
	}
}
