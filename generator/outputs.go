package generator

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"slices"
	"strings"
	texttemplate "text/template"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/templates"
)

// output is one file of the site: where it goes and how it is made. Every
// output of the build is an entry of outputs(m), so adding a file is one
// entry (and one template or document function).
type output struct {
	path   string
	render func(r *renderer, m *model) ([]byte, error)
}

func outputs(m *model) []output {
	jsonOut := func(p string, doc func(m *model) any) output {
		return output{p, func(_ *renderer, m *model) ([]byte, error) { return jsonDoc(doc(m)) }}
	}
	outs := []output{
		{"index.html", (*renderer).index},
		{"404.html", (*renderer).notFound},
		{"developers/index.html", (*renderer).developers},
		jsonOut("catalog.json", func(m *model) any { return catalog(m) }),
		jsonOut(".well-known/x402.json", func(m *model) any { return x402Doc(m) }),
		jsonOut(".well-known/x402", func(m *model) any { return x402Doc(m) }),
		jsonOut(".well-known/mcp/server-card.json", func(m *model) any { return card(m) }),
		jsonOut("openapi.json", func(m *model) any { return openAPI(m) }),
		jsonOut(".well-known/openapi.json", func(m *model) any { return openAPI(m) }),
		{"robots.txt", func(r *renderer, m *model) ([]byte, error) { return r.text("robots.tmpl", m) }},
		{"llms.txt", (*renderer).llms},
		{"sitemap.xml", (*renderer).sitemap},
	}
	for _, c := range m.Certs {
		c := c
		outs = append(outs,
			output{c.HubPath + "index.html", func(r *renderer, m *model) ([]byte, error) { return r.hub(m, c) }},
			jsonOut(c.FeedPath, func(m *model) any { return feed(m, c) }),
		)
	}
	for _, p := range providers(m) {
		p := p
		outs = append(outs, output{"providers/" + p.Slug + "/index.html", func(r *renderer, m *model) ([]byte, error) {
			return r.list(m, "providers/"+p.Slug+"/", p.Name+" certifications", filterCerts(m, func(c *certStats) bool { return c.Cert.Provider == p.Name }))
		}})
	}
	for _, st := range []certbank.ExamStatus{certbank.Current, certbank.Retiring} {
		st := st
		outs = append(outs, output{"status/" + string(st) + "/index.html", func(r *renderer, m *model) ([]byte, error) {
			return r.list(m, "status/"+string(st)+"/", strings.ToUpper(string(st[:1]))+string(st[1:])+" exams", filterCerts(m, func(c *certStats) bool { return c.Cert.Status == st }))
		}})
	}
	assets, _ := fs.Sub(templates.FS, "assets")
	fs.WalkDir(assets, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		outs = append(outs, output{"assets/" + p, func(*renderer, *model) ([]byte, error) {
			data, err := fs.ReadFile(assets, p)
			if err != nil {
				return nil, err
			}
			return minifyAsset(p, data)
		}})
		return nil
	})
	return outs
}

type provider struct{ Slug, Name string }

func providerSlug(name string) string { return strings.ToLower(strings.ReplaceAll(name, " ", "-")) }

func providers(m *model) []provider {
	seen := map[string]bool{}
	var ps []provider
	for _, c := range m.Certs {
		if !seen[c.Cert.Provider] {
			seen[c.Cert.Provider] = true
			ps = append(ps, provider{providerSlug(c.Cert.Provider), c.Cert.Provider})
		}
	}
	return ps
}

func filterCerts(m *model, keep func(*certStats) bool) []*certStats {
	var out []*certStats
	for _, c := range m.Certs {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// renderer holds the parsed templates of one build.
type renderer struct {
	pages        map[string]*template.Template
	texts        *texttemplate.Template
	assetVersion string
}

func newRenderer() (*renderer, error) {
	funcs := template.FuncMap{"providerSlug": providerSlug}
	r := &renderer{pages: map[string]*template.Template{}}
	for _, page := range []string{"index.html", "hub.html", "developers.html", "404.html", "list.html"} {
		files := []string{"layout.html", page}
		if page == "list.html" {
			files = append(files, "index.html")
		}
		t := template.New(page).Funcs(funcs)
		var err error
		if page == "list.html" {
			// list.html reuses index.html's "certlist" but has its own "content".
			t, err = t.ParseFS(templates.FS, "layout.html", "index.html")
			if err == nil {
				t, err = t.ParseFS(templates.FS, "list.html")
			}
		} else {
			t, err = t.ParseFS(templates.FS, files...)
		}
		if err != nil {
			return nil, fmt.Errorf("parse template %s: %w", page, err)
		}
		r.pages[page] = t
	}
	tt, err := texttemplate.New("text").ParseFS(templates.FS, "*.tmpl")
	if err != nil {
		return nil, fmt.Errorf("parse text templates: %w", err)
	}
	r.texts = tt
	// One version for all assets (the stylesheet and the scripts), so a
	// change to any of them reaches browsers despite the immutable caching.
	h := sha256.New()
	err = fs.WalkDir(templates.FS, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(templates.FS, p)
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(data))
		h.Write(data)
		return err
	})
	if err != nil {
		return nil, err
	}
	r.assetVersion = hex.EncodeToString(h.Sum(nil)[:4])
	return r, nil
}

// pageView is what layout.html renders; Page is the page's own view model.
type pageView struct {
	Site         certbank.Site
	Title        string
	Description  string
	Canonical    string
	Nav          string
	AssetVersion string
	JSONLD       []template.JS
	Scripts      []string
	Prices       []priceRow
	Page         any
}

type priceRow struct {
	Questions     int
	With, Without string
}

func (r *renderer) view(m *model, p string, title, desc, nav string, page any) pageView {
	var prices []priceRow
	for _, e := range m.Site.Pricing.Entries {
		with, _ := m.Site.Pricing.Price(e.Questions, true)
		without, _ := m.Site.Pricing.Price(e.Questions, false)
		prices = append(prices, priceRow{e.Questions, with.String(), without.String()})
	}
	return pageView{
		Site: m.Site, Title: title, Description: desc, Canonical: m.Site.BaseURL + "/" + p,
		Nav: nav, AssetVersion: r.assetVersion, Prices: prices, Page: page,
	}
}

func (r *renderer) html(page string, v pageView) ([]byte, error) {
	var buf bytes.Buffer
	if err := r.pages[page].ExecuteTemplate(&buf, "layout", v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (r *renderer) text(name string, data any) ([]byte, error) {
	var buf bytes.Buffer
	if err := r.texts.ExecuteTemplate(&buf, name, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type indexPage struct {
	Total     int
	Certs     []*certStats
	Providers []provider
	Path      string // always "": the index is no filtered list (see listPage)
}

func (r *renderer) index(m *model) ([]byte, error) {
	v := r.view(m, "", m.Site.Name+": IT certification practice questions",
		fmt.Sprintf("Free, verified practice questions with explanations for %d IT certifications.", len(m.Certs)), "index",
		indexPage{Total: m.Total, Certs: m.Certs, Providers: providers(m)})
	v.Scripts = []string{"/assets/index.js?v=" + r.assetVersion}
	return r.html("index.html", v)
}

type listPage struct {
	Heading   string
	Certs     []*certStats
	Path      string     // this page's path, e.g. "providers/vendorfour/"
	Providers []provider // for the browse links shared with the index
}

func (r *renderer) list(m *model, p, heading string, certs []*certStats) ([]byte, error) {
	v := r.view(m, p, heading+" · "+m.Site.Name, heading+": practice questions with explanations.", "index",
		listPage{Heading: heading, Certs: certs, Path: p, Providers: providers(m)})
	return r.html("list.html", v)
}

func (r *renderer) notFound(m *model) ([]byte, error) {
	v := r.view(m, "404.html", "Page not found · "+m.Site.Name, "This page does not exist.", "", nil)
	return r.html("404.html", v)
}

type tierRow struct {
	Title, Price, PerMonth, Unique, Extras string
	PerMinute, MaxLimit                    int
}

type developersPage struct {
	Example      string
	X402Example  string // a paid link that answers 402: the example's, or another certification's with offers
	NoOffers     bool   // no certification can fill a paid request: X402Example does not answer 402 yet
	Tiers        []tierRow
	Tools        []cardTool
	NetworkTitle string
	OfferLimits  []int      // the price list's sizes, the columns of Offers
	Offers       []offerRow // what each certification's paid route can fill
}

// offerRow is one certification's paid offers on the developers page: for
// each of the price list's sizes, the difficulties it can fill, or "none".
type offerRow struct {
	Name, Slug string
	Cells      []string
}

// offerRows tabulates every certification's Offers by limit.
func offerRows(m *model) []offerRow {
	var rows []offerRow
	for _, c := range m.Certs {
		row := offerRow{Name: c.Cert.Name, Slug: c.Cert.Slug}
		for _, e := range m.Site.Pricing.Entries {
			var ds []string
			for _, o := range c.Offers {
				if o.Limit == e.Questions {
					ds = append(ds, o.Difficulty)
				}
			}
			cell := strings.Join(ds, ", ")
			if cell == "" {
				cell = "none"
			}
			row.Cells = append(row.Cells, cell)
		}
		rows = append(rows, row)
	}
	return rows
}

func limitText(n int) string {
	if n == certbank.Unlimited {
		return "unlimited"
	}
	return fmt.Sprint(n)
}

func (r *renderer) developers(m *model) ([]byte, error) {
	p := developersPage{Example: "vendorfour-security-plus", Tools: mcpTools(), NetworkTitle: networkTitle(m.Network)}
	if len(m.Certs) > 0 && m.Bank(p.Example) == nil {
		p.Example = m.Certs[0].Cert.Slug
	}
	for _, c := range append([]*certStats{m.Bank(p.Example)}, m.Certs...) {
		if c != nil && len(c.Offers) > 0 {
			p.X402Example = c.X402URL
			break
		}
	}
	if p.X402Example == "" {
		p.NoOffers = true
		p.X402Example = m.Site.BaseURL + certbank.PathX402 + "?certification=" + p.Example
		if limits := m.Site.Pricing.Limits(); len(limits) > 0 {
			p.X402Example += fmt.Sprintf("&limit=%d", slices.Min(limits))
		}
	}
	p.OfferLimits = m.Site.Pricing.Limits()
	p.Offers = offerRows(m)
	for _, t := range m.Site.Tiers {
		var extras []string
		if t.Pagination {
			extras = append(extras, "pagination")
		}
		if t.BulkExport {
			extras = append(extras, "bulk export")
		}
		p.Tiers = append(p.Tiers, tierRow{Title: t.Title, Price: t.Price, PerMinute: t.PerMinute, PerMonth: limitText(t.PerMonth),
			Unique: limitText(t.UniqueQuestions), MaxLimit: t.MaxLimit, Extras: strings.Join(extras, ", ")})
	}
	v := r.view(m, "developers/", "Developers · "+m.Site.Name, "Free feeds, API keys, x402 pay-per-request and MCP access to certbank's practice questions.", "developers", p)
	return r.html("developers.html", v)
}

// Bank returns the stats of the certification with the given slug, or nil.
func (m *model) Bank(slug string) *certStats {
	for _, c := range m.Certs {
		if c.Cert.Slug == slug {
			return c
		}
	}
	return nil
}

type domainRow struct {
	Name              string
	Weight            int
	Questions, Sample int
	Objectives        []objectiveRow
}

// objectiveRow is one exam-guide objective on a hub, with the published
// questions that test it.
type objectiveRow struct {
	Code, Name string
	Questions  int
}

type hubPage struct {
	Stats    *certStats
	Domains  []domainRow
	Chart    template.HTML
	DrawSize int       // questions drawn per request in "practise with your API key"
	Free     *freeTier // the free tier's limits, nil when the site has none
	Exam     mockExam
}

// mockExam is what a hub says about its mock exam: the full and half
// lengths and the tiers whose unique-question allowance holds each (a keyed
// exam is one request of that many questions).
type mockExam struct {
	Full, FullMinutes, Half, HalfMinutes int
	FullTiers, HalfTiers                 string
}

// tiersHolding names the tiers that may be served n different questions.
func tiersHolding(s certbank.Site, n int) string {
	var out []string
	for _, t := range s.Tiers {
		if t.UniqueQuestions == certbank.Unlimited || t.UniqueQuestions >= n {
			out = append(out, t.Title)
		}
	}
	return strings.Join(out, " or ")
}

// freeTier is what a hub says about the free API key.
type freeTier struct {
	PerMinute                 int
	PerMonth, UniqueQuestions string
}

// hubDrawSize is how many questions a hub draws with a learner's API key.
const hubDrawSize = 10

func (r *renderer) hub(m *model, c *certStats) ([]byte, error) {
	p := hubPage{Stats: c, Chart: difficultyChart(c), DrawSize: hubDrawSize}
	full, half := c.Cert.ExamQuestions, (c.Cert.ExamQuestions+1)/2
	p.Exam = mockExam{Full: full, FullMinutes: c.Cert.ExamMinutes, Half: half, HalfMinutes: (c.Cert.ExamMinutes + 1) / 2,
		FullTiers: tiersHolding(m.Site, full), HalfTiers: tiersHolding(m.Site, half)}
	if t, ok := m.Site.Tier("free"); ok {
		p.Free = &freeTier{PerMinute: t.PerMinute, PerMonth: limitText(t.PerMonth), UniqueQuestions: limitText(t.UniqueQuestions)}
		if t.MaxLimit > 0 && t.MaxLimit < p.DrawSize {
			p.DrawSize = t.MaxLimit
		}
	}
	sampleBy := map[string]int{}
	for _, q := range c.Sample {
		sampleBy[q.Domain]++
	}
	byObjective := map[string]int{}
	for _, q := range c.Published {
		byObjective[q.Objective]++
	}
	for _, d := range c.Cert.Domains {
		row := domainRow{d.Name, d.Weight, c.ByDomain[d.Name], sampleBy[d.Name], nil}
		for _, o := range d.Objectives {
			row.Objectives = append(row.Objectives, objectiveRow{o.Code, o.Name, byObjective[o.Code]})
		}
		p.Domains = append(p.Domains, row)
	}
	title := hubTitle(c.Cert.Name, c.Cert.ExamCode)
	desc := fmt.Sprintf("%d free %s practice questions with explanations of every option; %d verified questions in all.", len(c.Sample), c.Cert.Name, len(c.Published))
	v := r.view(m, c.HubPath, title+" · "+m.Site.Name, desc, "", p)
	ld, err := hubJSONLD(m, c)
	if err != nil {
		return nil, err
	}
	v.JSONLD = []template.JS{ld}
	v.Scripts = []string{"/assets/practice.js?v=" + r.assetVersion}
	return r.html("hub.html", v)
}

// difficultyChart is an inline SVG bar chart of the difficulty mix of the
// published questions, with its numbers in text for screen readers.
func difficultyChart(c *certStats) template.HTML {
	total := max(len(c.Published), 1)
	var b strings.Builder
	id := "chart-" + c.Cert.Slug
	counts := []int{c.ByDiff[certbank.Easy], c.ByDiff[certbank.Medium], c.ByDiff[certbank.Hard]}
	desc := fmt.Sprintf("Easy %d, medium %d, hard %d of %d questions.", counts[0], counts[1], counts[2], len(c.Published))
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 420 110" role="img" aria-labelledby="%s-t %s-d"><title id="%s-t">Difficulty mix</title><desc id="%s-d">%s</desc>`, id, id, id, id, template.HTMLEscapeString(desc))
	for i, name := range []string{"easy", "medium", "hard"} {
		y := 8 + i*34
		w := 260 * counts[i] / total
		pct := 100 * counts[i] / total
		fmt.Fprintf(&b, `<text x="0" y="%d">%s</text><rect class="bar-%s" x="70" y="%d" width="%d" height="22" rx="3"></rect><text x="%d" y="%d">%d (%d%%)</text>`,
			y+16, strings.ToUpper(name[:1])+name[1:], name, y, max(w, 1), 78+w, y+16, counts[i], pct)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// jsonLDBudget caps the bytes of a hub's schema.org Quiz. The Quiz repeats
// the stems and options of the sample the page already shows, so without a
// cap a certification of long scenarios (cloudone-solutions-architect-pro)
// pushed its hub past the 100 KB page budget; with it the Quiz costs at most
// 14 KB of a hub's HTML + CSS + JS, whatever the sample holds.
const jsonLDBudget = 14_000

// hubJSONLD is the hub's schema.org Quiz: one Question per free sample
// question, in the page's order, for as many as fit in jsonLDBudget (at
// least one), each with its four options as Answer objects (the key as
// acceptedAnswer, the distractors as suggestedAnswer) positioned 0-3 for A-D,
// and the exam as the educationalAlignment. The explanations stay in the
// visible page only: repeating them here would cost about 10 KB a hub.
func hubJSONLD(m *model, c *certStats) (template.JS, error) {
	type question struct {
		Type            string     `json:"@type"`
		EduQuestionType string     `json:"eduQuestionType"`
		Text            string     `json:"text"`
		EduLevel        string     `json:"educationalLevel"`
		AcceptedAnswer  answerEx   `json:"acceptedAnswer"`
		SuggestedAnswer []answerEx `json:"suggestedAnswer"`
	}
	qs := []question{}
	for _, q := range c.Sample {
		var accepted answerEx
		var sugg []answerEx
		for i, l := range certbank.Letters {
			a := answerEx{Type: "Answer", Position: i, Text: string(l) + ". " + q.Options[i]}
			if l == q.Answer {
				accepted = a
			} else {
				sugg = append(sugg, a)
			}
		}
		qs = append(qs, question{
			Type: "Question", EduQuestionType: "Multiple choice",
			Text: q.Stem, EduLevel: string(q.Difficulty), AcceptedAnswer: accepted, SuggestedAnswer: sugg,
		})
	}
	doc := map[string]any{
		"@context":    "https://schema.org",
		"@type":       "Quiz",
		"name":        c.Cert.Name + " practice questions",
		"description": fmt.Sprintf("%d free practice questions with explanations for %s.", len(c.Sample), c.Cert.Name),
		"url":         c.HubURL,
		"about":       map[string]any{"@type": "Thing", "name": c.Cert.Name},
		"educationalAlignment": []map[string]any{{
			"@type": "AlignmentObject", "alignmentType": "educationalSubject",
			"targetName": c.Cert.Name, "educationalFramework": c.Cert.Provider + " certification" + codeSuffix(c.Cert.ExamCode),
			"targetUrl": c.HubURL,
		}},
		"learningResourceType": "Practice problem",
		"provider":             map[string]any{"@type": "Organization", "name": m.Site.Name, "url": m.Site.BaseURL + "/"},
		"isAccessibleForFree":  true,
		"hasPart":              qs,
		"inLanguage":           "en",
		"dateModified":         m.Date,
	}
	// Drop questions from the end until the Quiz fits: a subset of what the
	// page shows is still a truthful description of it.
	for {
		data, err := json.Marshal(doc)
		if err != nil {
			return "", err
		}
		if len(data) <= jsonLDBudget || len(qs) <= 1 {
			return template.JS(data), nil
		}
		qs = qs[:len(qs)-1]
		doc["hasPart"] = qs
		doc["description"] = fmt.Sprintf("%d of the %d free practice questions with explanations for %s.", len(qs), len(c.Sample), c.Cert.Name)
	}
}

type answerEx struct {
	Type     string `json:"@type"`
	Position int    `json:"position"`
	Text     string `json:"text"`
}

func codeSuffix(code string) string {
	if code == "" {
		return ""
	}
	return " " + code
}

func (r *renderer) llms(m *model) ([]byte, error) {
	return r.text("llms.tmpl", struct {
		*model
		Quality string
	}{m, qualityOf(m).Method + "."})
}

type sitemapURL struct{ Loc, LastMod string }

func (r *renderer) sitemap(m *model) ([]byte, error) {
	urls := []sitemapURL{{m.Site.BaseURL + "/", m.Date}, {m.Site.BaseURL + "/developers/", m.Date}}
	for _, c := range m.Certs {
		urls = append(urls, sitemapURL{c.HubURL, m.Date})
	}
	for _, p := range providers(m) {
		urls = append(urls, sitemapURL{m.Site.BaseURL + "/providers/" + p.Slug + "/", m.Date})
	}
	for _, st := range []string{"current", "retiring"} {
		urls = append(urls, sitemapURL{m.Site.BaseURL + "/status/" + st + "/", m.Date})
	}
	return r.text("sitemap.tmpl", struct {
		URLs []sitemapURL
	}{urls})
}

// hubTitle names a certification's study hub: its name, and its exam code
// in brackets unless the name already carries the code.
func hubTitle(name, code string) string {
	if code == "" || strings.Contains(name, code) {
		return name + " practice questions"
	}
	return name + " (" + code + ") practice questions"
}
