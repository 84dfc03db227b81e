package x402

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/certbank/certbank"
)

func TestV1Body(t *testing.T) {
	req := testRequirement()
	req.Network = "base-mainnet" // an alias must never reach the wire
	req.PayTo = "0x209693bc6afc0c5328ba36faf03c514ef312287c"
	var got map[string]any
	if err := json.Unmarshal(req.V1Body("X-PAYMENT header is required"), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"x402Version": 1.0,
		"error":       "X-PAYMENT header is required",
		"accepts": []any{map[string]any{
			"scheme":            "exact",
			"network":           "base",
			"maxAmountRequired": "10000",
			"resource":          "https://certbank.example/api/v1/x402?certification=cissp&limit=10",
			"description":       "10 cissp practice questions",
			"mimeType":          "application/json",
			"payTo":             testPayTo,
			"maxTimeoutSeconds": 300.0,
			"asset":             "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
			"extra":             map[string]any{"name": "USD Coin", "version": "2"},
		}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("V1Body =\n%v\nwant\n%v", got, want)
	}
}

func TestV1BodyDefaults(t *testing.T) {
	req := testRequirement()
	req.MimeType, req.Description = "", ""
	var got v1PaymentRequired
	if err := json.Unmarshal(req.V1Body(""), &got); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	_ = json.Unmarshal(req.V1Body(""), &raw)
	entry := raw["accepts"].([]any)[0].(map[string]any)
	for _, key := range []string{"mimeType", "description"} {
		if _, ok := entry[key]; !ok {
			t.Errorf("accepts[0] has no %s key", key)
		}
	}
	if _, ok := entry["outputSchema"]; ok {
		t.Error("accepts[0] has an outputSchema key")
	}
	if _, ok := raw["error"]; !ok {
		t.Error("no error key")
	}
	if got.Accepts[0].MimeType != DefaultMimeType {
		t.Errorf("mimeType = %q", got.Accepts[0].MimeType)
	}
}

func TestV2Header(t *testing.T) {
	req := testRequirement()
	req.Network = "base-sepolia"
	raw, err := base64.StdEncoding.Strict().DecodeString(req.V2Header("PAYMENT-SIGNATURE header is required"))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"x402Version": 2.0,
		"error":       "PAYMENT-SIGNATURE header is required",
		"resource": map[string]any{
			"url":         "https://certbank.example/api/v1/x402?certification=cissp&limit=10",
			"description": "10 cissp practice questions",
			"mimeType":    "application/json",
		},
		"accepts": []any{map[string]any{
			"scheme":            "exact",
			"network":           "eip155:84532",
			"amount":            "10000",
			"asset":             "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
			"payTo":             testPayTo,
			"maxTimeoutSeconds": 300.0,
			"extra":             map[string]any{"name": "USDC", "version": "2"},
		}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("V2Header =\n%v\nwant\n%v", got, want)
	}
}

func TestRequirementValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Requirement)
		ok   bool
	}{
		{"valid", func(*Requirement) {}, true},
		{"alias network", func(r *Requirement) { r.Network = "base-mainnet" }, true},
		{"CAIP-2 network", func(r *Requirement) { r.Network = "eip155:84532" }, true},
		{"unknown network", func(r *Requirement) { r.Network = "solana" }, false},
		{"bad payee", func(r *Requirement) { r.PayTo = "0x1234" }, false},
		{"zero payee", func(r *Requirement) { r.PayTo = "0x0000000000000000000000000000000000000000" }, false},
		{"free", func(r *Requirement) { r.Amount = 0 }, false},
		{"no timeout", func(r *Requirement) { r.MaxTimeoutSeconds = 0 }, false},
		{"relative resource", func(r *Requirement) { r.Resource = "/api/v1/x402?limit=10" }, false},
		{"ftp resource", func(r *Requirement) { r.Resource = "ftp://certbank.example/x" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := testRequirement()
			tt.edit(&r)
			err := r.Validate()
			if tt.ok != (err == nil) {
				t.Fatalf("Validate() = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && certbank.ErrorCode(err) != certbank.Invalid {
				t.Errorf("code = %s", certbank.ErrorCode(err))
			}
		})
	}
}

func TestLookupNetwork(t *testing.T) {
	for _, tt := range []struct {
		name  string
		chain int64
	}{
		{"base", 8453}, {"BASE", 8453}, {"base-mainnet", 8453}, {"eip155:8453", 8453},
		{"base-sepolia", 84532}, {"eip155:84532", 84532},
		{"ethereum", 0}, {"eip155:1", 0}, {"", 0},
	} {
		n, ok := LookupNetwork(tt.name)
		if ok != (tt.chain != 0) || n.ChainID != tt.chain {
			t.Errorf("LookupNetwork(%q) = %d, %v; want chain %d", tt.name, n.ChainID, ok, tt.chain)
		}
	}
}

func TestSettlementHeader(t *testing.T) {
	s := Settlement{Transaction: "0xabc", Network: "base", Payer: "0x582CF17AFF1B782263b8a85706C10b8dFdD9A600"}
	tests := []struct {
		name     string
		version  int
		s        Settlement
		reason   string
		wantName string
		want     SettlementResponse
	}{
		{"v1 success", 1, s, "", HeaderPaymentResponse, SettlementResponse{Success: true, Transaction: "0xabc", Network: "base", Payer: s.Payer}},
		{"v2 success", 2, s, "", HeaderSettlementResponse, SettlementResponse{Success: true, Transaction: "0xabc", Network: "eip155:8453", Payer: s.Payer}},
		{"v1 failure", 1, Settlement{Network: "base", Payer: s.Payer}, ReasonTransactionFailed, HeaderPaymentResponse,
			SettlementResponse{ErrorReason: ReasonTransactionFailed, Network: "base", Payer: s.Payer}},
		{"v2 pending", 2, Settlement{Transaction: "0xabc", Network: "base", Payer: s.Payer, Pending: true}, "", HeaderSettlementResponse,
			SettlementResponse{ErrorReason: ReasonSettlementPending, Transaction: "0xabc", Network: "eip155:8453", Payer: s.Payer}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, value := SettlementHeader(tt.version, tt.s, tt.reason)
			if name != tt.wantName {
				t.Errorf("header name = %q, want %q", name, tt.wantName)
			}
			got, err := ParseSettlementHeader(value)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("settlement = %+v, want %+v", got, tt.want)
			}
			raw, _ := base64.StdEncoding.DecodeString(value)
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			if _, ok := m["transaction"]; !ok {
				t.Error("transaction key missing")
			}
		})
	}
}
