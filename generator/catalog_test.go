package generator_test

import (
	"encoding/json"
	"html"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
)

// jsonType names the JSON type of a value decoded with UseNumber.
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

// field is one expected member of a JSON object.
type field struct {
	name string
	typ  string // integer, string, boolean, object, array, date, url
}

// checkObject checks that obj has exactly the fields (plus the optional
// ones, when present) with their types, and returns it for further checks.
func checkObject(t *testing.T, where string, v any, fields []field, optional ...field) map[string]any {
	t.Helper()
	obj, ok := v.(map[string]any)
	if !ok {
		t.Errorf("%s is %s, want an object", where, jsonType(v))
		return map[string]any{}
	}
	known := map[string]bool{}
	check := func(f field, required bool) {
		known[f.name] = true
		val, ok := obj[f.name]
		if !ok {
			if required {
				t.Errorf("%s.%s is missing", where, f.name)
			}
			return
		}
		typ := f.typ
		switch f.typ {
		case "date", "url":
			typ = "string"
		}
		if got := jsonType(val); got != typ {
			t.Errorf("%s.%s is %s (%v), want %s", where, f.name, got, val, f.typ)
			return
		}
		switch f.typ {
		case "date":
			if _, err := time.Parse(time.DateOnly, val.(string)); err != nil {
				t.Errorf("%s.%s = %q, want a date YYYY-MM-DD", where, f.name, val)
			}
		case "url":
			if u, err := url.Parse(val.(string)); err != nil || u.Scheme == "" || u.Host == "" {
				t.Errorf("%s.%s = %q, want an absolute URL", where, f.name, val)
			}
		}
	}
	for _, f := range fields {
		check(f, true)
	}
	for _, f := range optional {
		check(f, false)
	}
	for k := range obj {
		if !known[k] {
			t.Errorf("%s has the field %q, which SPEC.md §2.6 does not define", where, k)
		}
	}
	return obj
}

func num(v any) int {
	n, _ := v.(json.Number).Int64()
	return int(n)
}

// fixtureFacts is what the content says the catalog must say, computed
// without the generator.
type fixtureFacts struct {
	base        string
	published   map[string][]*certbank.Question // by slug
	unpublished []*certbank.Question
	total       int
}

func factsOf(c *generator.Content) fixtureFacts {
	f := fixtureFacts{base: strings.TrimRight(c.Site.BaseURL, "/"), published: map[string][]*certbank.Question{}}
	for i := range c.Questions {
		q := &c.Questions[i]
		if publishedBy(q, c.Site.Quality.MinAgreeingSolvers) {
			f.published[q.Certification] = append(f.published[q.Certification], q)
			f.total++
		} else {
			f.unpublished = append(f.unpublished, q)
		}
	}
	return f
}

// TestCatalog checks catalog.json against SPEC.md §2.6 field by field.
func TestCatalog(t *testing.T) {
	c, out := buildFixture(t)
	facts := factsOf(c)
	if facts.total == 0 || len(facts.unpublished) == 0 || facts.total == len(c.Questions) {
		t.Fatalf("the fixture must publish most but not all questions: %d of %d published", facts.total, len(c.Questions))
	}
	cat := checkObject(t, "catalog", decodeJSON(t, out.Files, "catalog.json"), []field{
		{"version", "integer"}, {"name", "string"}, {"description", "string"}, {"site", "url"},
		{"generated", "date"}, {"total_questions", "integer"}, {"total_certifications", "integer"},
		{"exam_currency_verified", "date"}, {"quality", "object"}, {"access", "object"},
		{"pricing_x402", "array"}, {"contact", "string"}, {"certifications", "array"},
	})
	if v := num(cat["version"]); v != 1 {
		t.Errorf("version = %d, want 1 (SPEC.md §9)", v)
	}
	if cat["site"] != facts.base {
		t.Errorf("site = %v, want the base_url %s", cat["site"], facts.base)
	}
	if cat["generated"] != fixtureDate {
		t.Errorf("generated = %v, want the build date %s", cat["generated"], fixtureDate)
	}
	if cat["exam_currency_verified"] != c.Site.ExamCurrencyVerified {
		t.Errorf("exam_currency_verified = %v, want %s", cat["exam_currency_verified"], c.Site.ExamCurrencyVerified)
	}
	if got := num(cat["total_questions"]); got != facts.total || got != len(out.Bank.Questions) {
		t.Errorf("total_questions = %d, want the published count %d (bank bundle: %d)", got, facts.total, len(out.Bank.Questions))
	}
	if got := num(cat["total_certifications"]); got != len(c.Certifications) {
		t.Errorf("total_certifications = %d, want %d", got, len(c.Certifications))
	}
	if cat["contact"] != c.Site.Contact {
		t.Errorf("contact = %v, want %s", cat["contact"], c.Site.Contact)
	}

	q := checkObject(t, "quality", cat["quality"], []field{{"verified", "boolean"}, {"method", "string"}, {"format", "string"}})
	if q["verified"] != true {
		t.Errorf("quality.verified = %v, want true: every published question has 2 agreeing solvers", q["verified"])
	}

	acc := checkObject(t, "access", cat["access"], []field{{"free_samples", "string"}, {"rest", "object"}, {"x402", "object"}, {"mcp", "object"}})
	if fs, _ := acc["free_samples"].(string); !strings.HasPrefix(fs, facts.base+"/api/") || !strings.HasSuffix(fs, "/questions-free.json") {
		t.Errorf("access.free_samples = %q, want %s/api/{slug}/questions-free.json", fs, facts.base)
	}
	rest := checkObject(t, "access.rest", acc["rest"], []field{{"endpoint", "url"}, {"auth", "string"}, {"signup", "url"}, {"list", "url"}})
	fn := strings.TrimRight(c.Site.FunctionsURL, "/")
	wantURLs := map[string]string{
		"access.rest.endpoint": fn + "/functions/v1/api-v1-questions",
		"access.rest.signup":   facts.base + "/api/v1/signup",
		"access.rest.list":     fn + "/functions/v1/api-v1-certifications",
	}
	gotURLs := map[string]any{"access.rest.endpoint": rest["endpoint"], "access.rest.signup": rest["signup"], "access.rest.list": rest["list"]}
	if !strings.Contains(rest["auth"].(string), "x-api-key") {
		t.Errorf("access.rest.auth = %q, want it to name the x-api-key header", rest["auth"])
	}
	x := checkObject(t, "access.x402", acc["x402"], []field{{"endpoint", "url"}, {"protocol", "string"}, {"discovery", "url"}})
	wantURLs["access.x402.endpoint"] = facts.base + "/api/v1/x402"
	wantURLs["access.x402.discovery"] = facts.base + "/.well-known/x402.json"
	gotURLs["access.x402.endpoint"], gotURLs["access.x402.discovery"] = x["endpoint"], x["discovery"]
	mcp := checkObject(t, "access.mcp", acc["mcp"], []field{{"endpoint", "url"}, {"card", "url"}, {"npm", "string"}})
	wantURLs["access.mcp.endpoint"] = strings.TrimRight(c.Site.MCPURL, "/") + "/api/mcp"
	wantURLs["access.mcp.card"] = facts.base + "/.well-known/mcp/server-card.json"
	gotURLs["access.mcp.endpoint"], gotURLs["access.mcp.card"] = mcp["endpoint"], mcp["card"]
	for k, want := range wantURLs {
		if gotURLs[k] != want {
			t.Errorf("%s = %v, want %s", k, gotURLs[k], want)
		}
	}
	if mcp["npm"] != c.Site.MCPPackage {
		t.Errorf("access.mcp.npm = %v, want %s", mcp["npm"], c.Site.MCPPackage)
	}

	checkPricing(t, cat["pricing_x402"])
	checkCatalogCerts(t, c, facts, out, cat["certifications"])
}

// checkPricing: three entries with questions and price_usdc "0.01", "0.02",
// "0.04", and one note entry that states the 30% discount.
func checkPricing(t *testing.T, v any) {
	t.Helper()
	entries, _ := v.([]any)
	want := map[int]string{10: "0.01", 25: "0.02", 50: "0.04"}
	notes := 0
	seen := map[int]bool{}
	for i, e := range entries {
		obj, _ := e.(map[string]any)
		if _, isNote := obj["note"]; isNote {
			notes++
			n := checkObject(t, "pricing_x402 note", e, []field{{"note", "string"}})
			note, _ := n["note"].(string)
			if !strings.Contains(note, "30%") || !strings.Contains(strings.ToLower(note), "discount") || !strings.Contains(note, "include_answer=false") {
				t.Errorf("pricing note %q must state the 30%% discount when include_answer=false", note)
			}
			continue
		}
		p := checkObject(t, "pricing_x402["+string(rune('0'+i))+"]", e, []field{{"questions", "integer"}, {"price_usdc", "string"}})
		qn := num(p["questions"])
		seen[qn] = true
		if w, ok := want[qn]; !ok || p["price_usdc"] != w {
			t.Errorf("pricing entry for %d questions costs %v, want %q", qn, p["price_usdc"], w)
		}
	}
	if len(seen) != 3 || len(entries) != 4 || notes != 1 {
		t.Errorf("pricing_x402 has %d entries (%d prices, %d notes), want the three prices and one note", len(entries), len(seen), notes)
	}
}

func checkCatalogCerts(t *testing.T, c *generator.Content, facts fixtureFacts, out *generator.Output, v any) {
	t.Helper()
	entries, _ := v.([]any)
	if len(entries) != len(c.Certifications) {
		t.Fatalf("%d certification entries, want %d", len(entries), len(c.Certifications))
	}
	retiring := 0
	for i, e := range entries {
		cert := c.Certifications[i]
		where := "certifications[" + cert.Slug + "]"
		fields := []field{
			{"slug", "string"}, {"name", "string"}, {"provider", "string"}, {"questions", "integer"},
			{"difficulty", "object"}, {"domains", "integer"}, {"exam_status", "string"},
			{"free_sample", "url"}, {"study_hub", "url"}, {"paid_rest", "url"}, {"paid_x402", "url"},
			{"paid_offers", "array"},
		}
		optional := []field{{"paid_offers_note", "string"}, {"calibrated_questions", "integer"}}
		var ce map[string]any
		if cert.Status == certbank.Retiring {
			retiring++
			ce = checkObject(t, where, e, append(fields, field{"exam_note", "string"}), optional...)
			if ce["exam_note"] != cert.ExamNote || cert.ExamNote == "" {
				t.Errorf("%s.exam_note = %v, want %q", where, ce["exam_note"], cert.ExamNote)
			}
		} else {
			ce = checkObject(t, where, e, fields, optional...)
		}
		if ce["slug"] != cert.Slug || ce["name"] != cert.Name || ce["provider"] != cert.Provider {
			t.Errorf("%s is %v/%v/%v, want %s/%s/%s", where, ce["slug"], ce["name"], ce["provider"], cert.Slug, cert.Name, cert.Provider)
		}
		if ce["exam_status"] != string(cert.Status) {
			t.Errorf("%s.exam_status = %v, want %s", where, ce["exam_status"], cert.Status)
		}
		pub := facts.published[cert.Slug]
		if got := num(ce["questions"]); got != len(pub) {
			t.Errorf("%s.questions = %d, want the %d published", where, got, len(pub))
		}
		if got := num(ce["domains"]); got != len(cert.Domains) {
			t.Errorf("%s.domains = %d, want %d", where, got, len(cert.Domains))
		}
		diff := checkObject(t, where+".difficulty", ce["difficulty"], []field{{"easy", "integer"}, {"medium", "integer"}, {"hard", "integer"}})
		wantDiff := map[string]int{}
		for _, q := range pub {
			wantDiff[string(q.Difficulty)]++
		}
		for _, d := range []string{"easy", "medium", "hard"} {
			if got := num(diff[d]); got != wantDiff[d] {
				t.Errorf("%s.difficulty.%s = %d, want %d", where, d, got, wantDiff[d])
			}
		}
		offers, smallest := wantOffers(pub, c.Site.Pricing.Limits())
		paidX402 := facts.base + "/api/v1/x402?certification=" + cert.Slug
		if smallest > 0 {
			paidX402 += "&limit=" + strconv.Itoa(smallest)
		}
		urls := map[string]string{
			"free_sample": facts.base + "/api/" + cert.Slug + "/questions-free.json",
			"study_hub":   facts.base + "/certifications/" + cert.Slug + "/",
			"paid_rest":   facts.base + "/api/v1/questions?certification=" + cert.Slug,
			"paid_x402":   paidX402,
		}
		checkOffers(t, where+".paid_offers", ce["paid_offers"], offers)
		if _, has := ce["paid_offers_note"]; has != (len(offers) < 4*len(c.Site.Pricing.Entries)) {
			t.Errorf("%s.paid_offers_note present = %v with %d of %d combinations fillable; want it exactly while some cannot be filled", where, has, len(offers), 4*len(c.Site.Pricing.Entries))
		}
		for k, want := range urls {
			if ce[k] != want {
				t.Errorf("%s.%s = %v, want %s", where, k, ce[k], want)
			}
		}
		for _, k := range []string{"paid_rest", "paid_x402"} {
			u, err := url.Parse(ce[k].(string))
			if err != nil || u.Query().Get("certification") != cert.Slug {
				t.Errorf("%s.%s = %v, want a certification=%s query", where, k, ce[k], cert.Slug)
			}
		}
		// The static URLs point at files of the build.
		for k, file := range map[string]string{"free_sample": "api/" + cert.Slug + "/questions-free.json", "study_hub": "certifications/" + cert.Slug + "/index.html"} {
			if _, ok := out.Files[file]; !ok {
				t.Errorf("%s.%s points at %s, which the build did not write", where, k, file)
			}
		}
	}
	if retiring == 0 {
		t.Error("the fixture has no retiring certification, so exam_note goes untested")
	}
}

// TestQualityVerified: quality.verified is true only when the published
// questions meet a policy of at least two agreeing solvers.
func TestQualityVerified(t *testing.T) {
	tests := []struct {
		name   string
		min    int
		strip  bool // remove every verification, so nothing publishes
		want   bool
		wantQs int
	}{
		{"two solvers", 2, false, true, 17},
		{"one solver is not independent verification", 1, false, false, 19},
		{"no verification required", 0, false, false, 19}, // an unresolved disagreement still blocks
		{"nothing published", 2, true, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := loadFixture(t)
			c.Site.Quality.MinAgreeingSolvers = tt.min
			if tt.strip {
				for i := range c.Questions {
					c.Questions[i].Verifications = nil
				}
			}
			out, err := generator.Build(c, generator.Options{Date: fixtureDate})
			if err != nil {
				t.Fatal(err)
			}
			cat := decodeJSON(t, out.Files, "catalog.json")
			q := cat["quality"].(map[string]any)
			if q["verified"] != tt.want {
				t.Errorf("quality.verified = %v, want %v (method %q)", q["verified"], tt.want, q["method"])
			}
			if got := num(cat["total_questions"]); got != tt.wantQs {
				t.Errorf("total_questions = %d, want %d", got, tt.wantQs)
			}
			for _, bq := range out.Bank.Questions {
				if !publishedBy(&bq, tt.min) {
					t.Errorf("%s is published but does not meet min_agreeing_solvers %d", bq.ID, tt.min)
				}
			}
		})
	}
}

// TestFreeFeeds checks every free sample feed: about the sample size,
// with answers and explanations, and only published questions of its
// certification.
func TestFreeFeeds(t *testing.T) {
	c, out := buildFixture(t)
	facts := factsOf(c)
	bankByID := map[string]certbank.Question{}
	for _, q := range out.Bank.Questions {
		bankByID[q.ID] = q
	}
	for _, cert := range c.Certifications {
		p := "api/" + cert.Slug + "/questions-free.json"
		feed := decodeJSON(t, out.Files, p)
		pub := facts.published[cert.Slug]
		want := min(c.Site.FreeSampleSize, len(pub))
		if want < 3 {
			t.Fatalf("%s: the fixture publishes only %d questions; the sample test proves little", cert.Slug, len(pub))
		}
		if got := num(feed["count"]); got != want {
			t.Errorf("%s: count = %d, want %d (free_sample_size %d, %d published)", p, got, want, c.Site.FreeSampleSize, len(pub))
		}
		if feed["generated"] != fixtureDate {
			t.Errorf("%s: generated = %v, want %s", p, feed["generated"], fixtureDate)
		}
		fc := feed["certification"].(map[string]any)
		if fc["slug"] != cert.Slug || fc["exam_status"] != string(cert.Status) {
			t.Errorf("%s: certification = %v", p, fc)
		}
		if _, has := fc["exam_note"]; has != (cert.Status == certbank.Retiring) {
			t.Errorf("%s: exam_note present = %v, want it only for retiring exams", p, has)
		}
		qs, _ := feed["questions"].([]any)
		if len(qs) != want {
			t.Errorf("%s: %d questions, want %d", p, len(qs), want)
		}
		pubIDs := map[string]bool{}
		for _, q := range pub {
			pubIDs[q.ID] = true
		}
		var ids []string
		for i, v := range qs {
			q := checkObject(t, p+" question", v, []field{
				{"id", "string"}, {"question", "string"}, {"options", "object"}, {"difficulty", "string"},
				{"domain", "string"}, {"answer", "string"}, {"explanation", "string"},
			}, field{"references", "array"})
			id, _ := q["id"].(string)
			ids = append(ids, id)
			if !pubIDs[id] {
				t.Errorf("%s: question %d (%s) is not a published question of %s", p, i, id, cert.Slug)
				continue
			}
			bq := bankByID[id]
			if q["answer"] != string(bq.Answer) || q["explanation"] != bq.Explanation || q["explanation"] == "" {
				t.Errorf("%s: %s has answer %v, want %s with its explanation", p, id, q["answer"], bq.Answer)
			}
			opts := checkObject(t, p+" options", q["options"], []field{{"A", "string"}, {"B", "string"}, {"C", "string"}, {"D", "string"}})
			for j, l := range certbank.Letters {
				if opts[string(l)] != bq.Options[j] {
					t.Errorf("%s: %s option %s = %v, want %q", p, id, l, opts[string(l)], bq.Options[j])
				}
			}
		}
		if got, want := strings.Join(ids, ","), strings.Join(out.Bank.Samples[cert.Slug], ","); got != want {
			t.Errorf("%s: ids %s, want the bank's sample %s", p, got, want)
		}
	}
}

// TestNoAnswersLeak: unpublished questions appear nowhere under public/,
// and published questions outside the free samples are not there either
// (DESIGN.md §2: answers are in public/ only in the free sample feeds and the
// study hubs that practise them).
func TestNoAnswersLeak(t *testing.T) {
	c, out := buildFixture(t)
	facts := factsOf(c)
	sampled := map[string]bool{}
	for _, ids := range out.Bank.Samples {
		for _, id := range ids {
			sampled[id] = true
		}
	}
	var hidden []*certbank.Question
	hidden = append(hidden, facts.unpublished...)
	for _, qs := range facts.published {
		for _, q := range qs {
			if !sampled[q.ID] {
				hidden = append(hidden, q)
			}
		}
	}
	if len(facts.unpublished) < 2 {
		t.Fatalf("the fixture has %d unpublished questions, want at least 2", len(facts.unpublished))
	}
	// The probes: the id, and a distinctive stretch of the stem and of the
	// explanation in raw, HTML-escaped and JSON-escaped form.
	probes := func(q *certbank.Question) []string {
		ps := []string{q.ID}
		for _, s := range []string{q.Stem, q.Explanation} {
			mid := s[len(s)/3:]
			if len(mid) > 60 {
				mid = mid[:60]
			}
			js, _ := json.Marshal(mid)
			ps = append(ps, mid, html.EscapeString(mid), strings.Trim(string(js), `"`))
		}
		return ps
	}
	paths := make([]string, 0, len(out.Files))
	for p := range out.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, q := range hidden {
		for _, probe := range probes(q) {
			for _, p := range paths {
				if strings.Contains(string(out.Files[p]), probe) {
					t.Errorf("%s (%s) appears in public/%s: %q", q.ID, map[bool]string{true: "unpublished", false: "not in a sample"}[!publishedBy(q, 2)], p, probe)
				}
			}
		}
	}
	// And nothing in public/ names a solver: verification records are private.
	solver := regexp.MustCompile(`blind-solver-`)
	for _, p := range paths {
		if solver.Match(out.Files[p]) {
			t.Errorf("public/%s names a solver", p)
		}
	}
}
