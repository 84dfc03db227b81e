package integration_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// The published OpenAPI document describes every field the service sends:
// real responses of every route of a running `certbank serve` are
// validated against the document's schemas, made strict (every object
// schema with properties gets additionalProperties: false), so a field the
// document leaves out fails the test.

// oapiDoc is the part of an OpenAPI document the test reads.
type oapiDoc struct {
	Paths map[string]map[string]struct {
		Responses map[string]struct {
			Content map[string]struct {
				Schema any `json:"schema"`
			} `json:"content"`
		} `json:"responses"`
	} `json:"paths"`
	Components struct {
		Schemas map[string]any `json:"schemas"`
	} `json:"components"`
}

// strict rewrites an OpenAPI schema tree in place: component references
// point into $defs, and object schemas with properties allow no others.
func strict(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = strict(c)
		}
		if r, ok := x["$ref"].(string); ok {
			x["$ref"] = strings.Replace(r, "#/components/schemas/", "#/$defs/", 1)
		}
		if _, props := x["properties"]; props && x["type"] == "object" {
			if _, set := x["additionalProperties"]; !set {
				x["additionalProperties"] = false
			}
		}
	case []any:
		for i, c := range x {
			x[i] = strict(c)
		}
	}
	return v
}

// oapiValidator validates bodies against the strict schema of one
// operation's response.
type oapiValidator struct {
	doc  oapiDoc
	defs map[string]any
}

func newOAPIValidator(t *testing.T, path string) *oapiValidator {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v oapiValidator
	if err := json.Unmarshal(raw, &v.doc); err != nil {
		t.Fatal(err)
	}
	v.defs = strict(v.doc.Components.Schemas).(map[string]any)
	return &v
}

func (v *oapiValidator) check(t *testing.T, route, method, status, mediaType string, body []byte) {
	t.Helper()
	op, ok := v.doc.Paths[route][method]
	if !ok {
		t.Errorf("OpenAPI has no %s %s", method, route)
		return
	}
	resp, ok := op.Responses[status]
	if !ok {
		t.Errorf("OpenAPI %s %s documents no %s response (got one: %.200s)", method, route, status, body)
		return
	}
	media, ok := resp.Content[mediaType]
	if !ok {
		t.Errorf("OpenAPI %s %s %s documents no %s body (got %.200s)", method, route, status, mediaType, body)
		return
	}
	root := map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": v.defs}
	schemaJSON, _ := json.Marshal(strict(media.Schema))
	var top map[string]any
	json.Unmarshal(schemaJSON, &top)
	for k, x := range top {
		root[k] = x
	}
	rootJSON, _ := json.Marshal(root)
	var s jsonschema.Schema
	if err := json.Unmarshal(rootJSON, &s); err != nil {
		t.Fatalf("schema of %s %s %s: %v", method, route, status, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("resolve schema of %s %s %s: %v", method, route, status, err)
	}
	var inst any
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&inst); err != nil {
		t.Errorf("%s %s %s: body is not JSON: %.200s", method, route, status, body)
		return
	}
	if err := rs.Validate(inst); err != nil {
		t.Errorf("%s %s %s does not match the OpenAPI document: %v\nbody: %.600s", method, route, status, err, body)
	}
}

var keyRE = regexp.MustCompile(`cb_live_[A-Za-z0-9]+`)

func itKey(t *testing.T, bin, db, tier, email string) string {
	t.Helper()
	out, err := exec.Command(bin, "keys", "create", "--database", db, "--name", "OpenAPI test", "--email", email, "--tier", tier).CombinedOutput()
	if err != nil {
		t.Fatalf("keys create: %v\n%s", err, out)
	}
	k := keyRE.FindString(string(out))
	if k == "" {
		t.Fatalf("keys create printed no key: %s", out)
	}
	return k
}

func TestResponsesMatchOpenAPI(t *testing.T) {
	bin, pub, bank := itSite(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "db.sqlite")
	p := itServe(t, bin, "--public", pub, "--bank", bank, "--database", db)
	free := itKey(t, bin, db, "free", "free@example.com")
	ent := itKey(t, bin, db, "enterprise", "ent@example.com")
	v := newOAPIValidator(t, filepath.Join(pub, "openapi.json"))
	slug := itCertSlug

	type call struct {
		method, route, url, key, body string
		header                        []string
		status                        int
	}
	q := "certification=" + slug
	calls := []call{
		{"get", "/api/v1/questions", "/api/v1/questions?" + q + "&limit=3&include_answer=true", free, "", nil, 200},
		{"get", "/api/v1/questions", "/api/v1/questions?" + q + "&limit=3", free, "", nil, 200},
		{"get", "/api/v1/questions", "/api/v1/questions?" + q + "&limit=3&random=false&page=2", ent, "", nil, 200},
		{"get", "/api/v1/questions", "/api/v1/questions?" + q + "&limit=3&random=false&page=1", free, "", nil, 403},
		{"get", "/api/v1/questions", "/api/v1/questions?limit=0", free, "", nil, 400},
		{"get", "/api/v1/questions", "/api/v1/questions", "", "", nil, 401},
		{"get", "/functions/v1/api-v1-questions", "/functions/v1/api-v1-questions?" + q + "&limit=2", ent, "", nil, 200},
		{"get", "/api/v1/certifications", "/api/v1/certifications", free, "", nil, 200},
		{"get", "/functions/v1/api-v1-certifications", "/functions/v1/api-v1-certifications", ent, "", nil, 200},
		{"get", "/api/v1/usage", "/api/v1/usage", free, "", nil, 200},
		{"get", "/functions/v1/api-v1-usage", "/functions/v1/api-v1-usage", ent, "", nil, 200},
		{"post", "/api/v1/signup", "/api/v1/signup", "", `{"name":"Ada","email":"ada@example.com"}`, nil, 201},
		{"post", "/api/v1/signup", "/api/v1/signup", "", `{"name":"Ada","email":"ada@example.com"}`, nil, 409},
		{"post", "/api/v1/signup", "/api/v1/signup", "", `{"name":""}`, nil, 400},
		{"get", "/api/v1/export", "/api/v1/export?" + q, free, "", nil, 403},
		{"get", "/api/{slug}/questions-free.json", "/api/" + slug + "/questions-free.json", "", "", nil, 200},
		{"get", "/api/v1/x402", "/api/v1/x402?" + q + "&limit=10", "", "", nil, 402},
		{"get", "/api/v1/x402", "/api/v1/x402?" + q + "&limit=10", "", "", []string{"X-PAYMENT", "bm90IGEgcGF5bWVudA=="}, 402},
		{"get", "/api/v1/x402", "/api/v1/x402?" + q + "&limit=7", "", "", nil, 400},
	}
	for _, c := range calls {
		req, _ := http.NewRequest(strings.ToUpper(c.method), p.base+c.url, strings.NewReader(c.body))
		if c.key != "" {
			req.Header.Set("x-api-key", c.key)
		}
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(c.header); i += 2 {
			req.Header.Set(c.header[i], c.header[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.status {
			t.Errorf("%s %s: status %d, want %d: %.300s", c.method, c.url, res.StatusCode, c.status, body)
			continue
		}
		v.check(t, c.route, c.method, itoa(res.StatusCode), "application/json", body)
	}

	// Bulk export: NDJSON, each line a KeyQuestion.
	req, _ := http.NewRequest("GET", p.base+"/api/v1/export?"+q+"&include_answer=true", nil)
	req.Header.Set("x-api-key", ent)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines++
		v.check(t, "/api/v1/export", "get", "200", "application/x-ndjson", bytes.Clone(sc.Bytes()))
	}
	res.Body.Close()
	if res.StatusCode != 200 || lines == 0 {
		t.Errorf("export: status %d, %d lines", res.StatusCode, lines)
	}

	// A paid request, by certbank's own x402 client on the development chain.
	out, err := exec.Command(bin, "pay", p.base+"/api/v1/x402?"+q+"&limit=10&include_answer=true", "--dev-wallet", "0", "--json").Output()
	if err != nil {
		t.Fatalf("certbank pay: %v\n%s", err, out)
	}
	v.check(t, "/api/v1/x402", "get", "200", "application/json", out)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestLearnerRoutesMatchOpenAPI: the mock exam, practice answer and report
// routes answer as the OpenAPI document says, their refusals included, and
// a flood of reports from one address is refused.
func TestLearnerRoutesMatchOpenAPI(t *testing.T) {
	bin, pub, bank := itSite(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "db.sqlite")
	p := itServe(t, bin, "--public", pub, "--bank", bank, "--database", db)
	ent := itKey(t, bin, db, "enterprise", "ent@example.com")
	v := newOAPIValidator(t, filepath.Join(pub, "openapi.json"))
	do := func(method, url, key, body string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, p.base+url, strings.NewReader(body))
		if key != "" {
			req.Header.Set("x-api-key", key)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	expect := func(method, route, url, key, body string, want int) []byte {
		t.Helper()
		got, b := do(method, url, key, body)
		if got != want {
			t.Errorf("%s %s: status %d, want %d: %.300s", method, url, got, want, b)
			return nil
		}
		if want != http.StatusNoContent {
			v.check(t, route, strings.ToLower(method), itoa(got), "application/json", b)
		}
		return b
	}
	q := "certification=" + itCertSlug
	var exam struct {
		ID        string `json:"id"`
		Questions []struct {
			ID string `json:"id"`
		} `json:"questions"`
	}
	b := expect("GET", "/api/v1/exam", "/api/v1/exam?"+q+"&length=half", ent, "", 200)
	if err := json.Unmarshal(b, &exam); err != nil || exam.ID == "" || len(exam.Questions) == 0 {
		t.Fatalf("exam: %v %.300s", err, b)
	}
	expect("GET", "/api/v1/exam", "/api/v1/exam?"+q, "", "", 200) // free sample
	expect("GET", "/api/v1/exam", "/api/v1/exam?"+q+"&length=double", ent, "", 400)
	expect("GET", "/api/v1/exam", "/api/v1/exam?certification=nope", ent, "", 400)
	expect("GET", "/api/v1/exam", "/api/v1/exam?"+q, "cb_live_nope", "", 401)

	route := "/api/v1/exam/{id}/answers"
	submit := "/api/v1/exam/" + exam.ID + "/answers"
	first := exam.Questions[0].ID
	expect("POST", route, submit, "", `{"answers":{"not-in-the-exam":"A"}}`, 400)
	expect("POST", route, submit, "", `{"answers":{"`+first+`":"E"}}`, 400)
	expect("POST", route, submit, "", `{"answers":"A"}`, 400)
	expect("POST", route, "/api/v1/exam/ex_00000000000000000000000000000000/answers", "", `{"answers":{}}`, 404)
	expect("POST", route, submit, "", `{"answers":{"`+first+`":"b"}}`, 200)
	expect("POST", route, submit, "", `{"answers":{"`+first+`":"b"}}`, 409)

	expect("POST", "/api/v1/answers", "/api/v1/answers", "", `{"question_id":"`+first+`","answer":"C"}`, 204)
	expect("POST", "/api/v1/answers", "/api/v1/answers", "", `{"question_id":"`+first+`","answer":"Z"}`, 400)
	expect("POST", "/api/v1/answers", "/api/v1/answers", "", `{"question_id":"nope","answer":"A"}`, 404)

	rep := `{"question_id":"` + first + `","reason":"ambiguous","text":"B also fits"}`
	expect("POST", "/api/v1/reports", "/api/v1/reports", "", rep, 201)
	expect("POST", "/api/v1/reports", "/api/v1/reports", "", `{"question_id":"`+first+`","reason":"meh"}`, 400)
	expect("POST", "/api/v1/reports", "/api/v1/reports", "", `{"question_id":"`+first+`","reason":"other","text":"`+strings.Repeat("x", 1001)+`"}`, 400)
	expect("POST", "/api/v1/reports", "/api/v1/reports", "", `{"question_id":"nope","reason":"typo"}`, 404)
	for range 9 {
		do("POST", "/api/v1/reports", "", rep)
	}
	expect("POST", "/api/v1/reports", "/api/v1/reports", "", rep, 429)
}
