package x402

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

// payloadJSON returns a valid payment of version as a generic JSON object to
// be edited by a test.
func payloadJSON(t *testing.T, version int) map[string]any {
	t.Helper()
	_, key := DevWallet(0)
	p := makePayment(t, version, testRequirement(), key, nil)
	var m map[string]any
	if err := json.Unmarshal(p.JSON(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

func authorizationOf(m map[string]any) map[string]any {
	return m["payload"].(map[string]any)["authorization"].(map[string]any)
}

func TestDecode(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	tests := []struct {
		name   string
		header string
		value  func(t *testing.T) string
		reason string // "" means success
	}{
		{"v1 ok", HeaderPayment, func(t *testing.T) string { return encode(t, payloadJSON(t, 1)) }, ""},
		{"v2 ok", HeaderPaymentSignature, func(t *testing.T) string { return encode(t, payloadJSON(t, 2)) }, ""},
		{"header name in lower case", "x-payment", func(t *testing.T) string { return encode(t, payloadJSON(t, 1)) }, ""},
		{"v2 accepted with extra keys and resource, extensions", HeaderPaymentSignature, func(t *testing.T) string {
			m := payloadJSON(t, 2)
			m["accepted"].(map[string]any)["serviceName"] = "certbank"
			m["accepted"].(map[string]any)["extra"].(map[string]any)["paymentFlow"] = "authorization"
			m["resource"] = map[string]any{"url": "https://certbank.example/x", "anything": 1}
			m["extensions"] = map[string]any{"bazaar": map[string]any{}}
			return encode(t, m)
		}, ""},
		{"not a payment header", "Authorization", func(t *testing.T) string { return encode(t, payloadJSON(t, 1)) }, ReasonInvalidPayload},
		{"oversized header", HeaderPayment, func(t *testing.T) string { return strings.Repeat("A", MaxHeaderBytes+4) }, ReasonInvalidPayload},
		{"empty", HeaderPayment, func(t *testing.T) string { return "" }, ReasonInvalidPayload},
		{"malformed base64", HeaderPayment, func(t *testing.T) string { return "!!!not base64!!!" }, ReasonInvalidPayload},
		{"url-safe base64", HeaderPayment, func(t *testing.T) string {
			return base64.URLEncoding.EncodeToString([]byte(`{"x402Version":1,"scheme":">>>??"}`))
		}, ReasonInvalidPayload},
		{"missing padding", HeaderPayment, func(t *testing.T) string {
			return strings.TrimRight(b64([]byte(`{"x402Version":1}`)), "=")
		}, ReasonInvalidPayload},
		{"whitespace inside", HeaderPayment, func(t *testing.T) string {
			s := encode(t, payloadJSON(t, 1))
			return s[:10] + "\n" + s[10:]
		}, ReasonInvalidPayload},
		{"base64 of non-JSON", HeaderPayment, func(t *testing.T) string { return b64([]byte("hello, world")) }, ReasonInvalidPayload},
		{"malformed JSON", HeaderPayment, func(t *testing.T) string { return b64([]byte(`{"x402Version":1,`)) }, ReasonInvalidPayload},
		{"JSON array", HeaderPayment, func(t *testing.T) string { return b64([]byte(`[1,2]`)) }, ReasonInvalidPayload},
		{"data after the JSON", HeaderPayment, func(t *testing.T) string {
			b, _ := json.Marshal(payloadJSON(t, 1))
			return b64(append(b, []byte(`{}`)...))
		}, ReasonInvalidPayload},
		{"version 2 in X-PAYMENT", HeaderPayment, func(t *testing.T) string { return encode(t, payloadJSON(t, 2)) }, ReasonInvalidVersion},
		{"version 1 in PAYMENT-SIGNATURE", HeaderPaymentSignature, func(t *testing.T) string { return encode(t, payloadJSON(t, 1)) }, ReasonInvalidVersion},
		{"version 3", HeaderPayment, func(t *testing.T) string {
			m := payloadJSON(t, 1)
			m["x402Version"] = 3
			return encode(t, m)
		}, ReasonInvalidVersion},
		{"version missing", HeaderPayment, func(t *testing.T) string {
			m := payloadJSON(t, 1)
			delete(m, "x402Version")
			return encode(t, m)
		}, ReasonInvalidVersion},
		{"version as a string", HeaderPayment, func(t *testing.T) string {
			m := payloadJSON(t, 1)
			m["x402Version"] = "1"
			return encode(t, m)
		}, ReasonInvalidPayload},
		{"unknown top-level key", HeaderPayment, func(t *testing.T) string {
			m := payloadJSON(t, 1)
			m["tip"] = "1000"
			return encode(t, m)
		}, ReasonInvalidPayload},
		{"unknown authorization key", HeaderPayment, func(t *testing.T) string {
			m := payloadJSON(t, 1)
			authorizationOf(m)["memo"] = "x"
			return encode(t, m)
		}, ReasonInvalidPayload},
		{"v1 with accepted", HeaderPayment, func(t *testing.T) string {
			m := payloadJSON(t, 1)
			m["accepted"] = payloadJSON(t, 2)["accepted"]
			return encode(t, m)
		}, ReasonInvalidPayload},
		{"v1 without network", HeaderPayment, func(t *testing.T) string {
			m := payloadJSON(t, 1)
			delete(m, "network")
			return encode(t, m)
		}, ReasonInvalidPayload},
		{"v2 with top-level scheme", HeaderPaymentSignature, func(t *testing.T) string {
			m := payloadJSON(t, 2)
			m["scheme"] = "exact"
			return encode(t, m)
		}, ReasonInvalidPayload},
		{"v2 without accepted", HeaderPaymentSignature, func(t *testing.T) string {
			m := payloadJSON(t, 2)
			delete(m, "accepted")
			return encode(t, m)
		}, ReasonInvalidPayload},
		{"v2 accepted amount as a number", HeaderPaymentSignature, func(t *testing.T) string {
			m := payloadJSON(t, 2)
			m["accepted"].(map[string]any)["amount"] = 10000
			return encode(t, m)
		}, ReasonInvalidPayload},
		{"missing payload", HeaderPayment, func(t *testing.T) string {
			m := payloadJSON(t, 1)
			delete(m, "payload")
			return encode(t, m)
		}, ReasonInvalidPayload},
		{"nonce of 31 bytes", HeaderPayment, func(t *testing.T) string {
			m := payloadJSON(t, 1)
			authorizationOf(m)["nonce"] = "0x" + strings.Repeat("ab", 31)
			return encode(t, m)
		}, ReasonInvalidPayload},
		{"nonce without 0x", HeaderPayment, func(t *testing.T) string {
			m := payloadJSON(t, 1)
			authorizationOf(m)["nonce"] = strings.Repeat("ab", 33)
			return encode(t, m)
		}, ReasonInvalidPayload},
		{"nonce not hex", HeaderPayment, func(t *testing.T) string {
			m := payloadJSON(t, 1)
			authorizationOf(m)["nonce"] = "0x" + strings.Repeat("zz", 32)
			return encode(t, m)
		}, ReasonInvalidPayload},
		{"negative value", HeaderPayment, func(t *testing.T) string {
			m := payloadJSON(t, 1)
			authorizationOf(m)["value"] = "-10000"
			return encode(t, m)
		}, ReasonInvalidPayload},
		{"value with exponent", HeaderPayment, func(t *testing.T) string {
			m := payloadJSON(t, 1)
			authorizationOf(m)["value"] = "1e4"
			return encode(t, m)
		}, ReasonInvalidPayload},
		{"value as a number", HeaderPayment, func(t *testing.T) string {
			m := payloadJSON(t, 1)
			authorizationOf(m)["value"] = 10000
			return encode(t, m)
		}, ReasonInvalidPayload},
		{"value of 2^256", HeaderPayment, func(t *testing.T) string {
			m := payloadJSON(t, 1)
			authorizationOf(m)["value"] = "115792089237316195423570985008687907853269984665640564039457584007913129639936"
			return encode(t, m)
		}, ReasonInvalidPayload},
		{"validBefore empty", HeaderPayment, func(t *testing.T) string {
			m := payloadJSON(t, 1)
			authorizationOf(m)["validBefore"] = ""
			return encode(t, m)
		}, ReasonInvalidPayload},
		{"from not an address", HeaderPayment, func(t *testing.T) string {
			m := payloadJSON(t, 1)
			authorizationOf(m)["from"] = "0x1234"
			return encode(t, m)
		}, ReasonInvalidPayload},
		{"signature not hex", HeaderPayment, func(t *testing.T) string {
			m := payloadJSON(t, 1)
			m["payload"].(map[string]any)["signature"] = "0xnothex"
			return encode(t, m)
		}, ReasonInvalidPayload},
		{"signature of odd length", HeaderPayment, func(t *testing.T) string {
			m := payloadJSON(t, 1)
			m["payload"].(map[string]any)["signature"] = "0xabc"
			return encode(t, m)
		}, ReasonInvalidPayload},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Decode(tt.header, tt.value(t))
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				if p.Authorization.Value.Int64() != 10000 || len(p.Signature) != 65 {
					t.Fatalf("decoded %+v", p)
				}
				return
			}
			wantReason(t, err, tt.reason)
			if msg := err.(*Error).Message; msg == "" {
				t.Error("no message")
			}
		})
	}
}

func TestDecodeKeepsFields(t *testing.T) {
	_, key := DevWallet(1)
	req := testRequirement()
	for _, version := range []int{1, 2} {
		p := makePayment(t, version, req, key, nil)
		if p.Version != version || p.Scheme != "exact" || p.Network != req.network().wireName(version) {
			t.Errorf("v%d envelope = %d %q %q", version, p.Version, p.Scheme, p.Network)
		}
		if (p.Accepted != nil) != (version == 2) {
			t.Errorf("v%d accepted = %+v", version, p.Accepted)
		}
		if p.Authorization.Nonce != strings.ToLower(p.Authorization.Nonce) {
			t.Errorf("nonce %q not lower case", p.Authorization.Nonce)
		}
		from, _ := DevWallet(1)
		if want := strings.ToLower(from) + "/" + p.Authorization.Nonce; p.ReplayKey() != want {
			t.Errorf("ReplayKey = %q, want %q", p.ReplayKey(), want)
		}
	}
}
