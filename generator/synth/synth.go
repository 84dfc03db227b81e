// Package synth writes synthetic content trees for benchmarks and tests: a
// valid site.yaml, certification.yaml files for real slugs and question files
// of realistic size, shaped like the corpus of research/perf-baselines.md §3
// (stems of 34–46 words, options of 7–13 words, explanations of 70–90 words,
// about 22% of the strings single-quoted by yaml.v3, UUID ids). Every
// question carries two agreeing solver verifications, so the whole bank
// publishes.
//
// The text is random words: it is never shipped in content/.
package synth

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/certbank/certbank"
	"gopkg.in/yaml.v3"
)

// Write writes a content tree to dir (created if needed): site.yaml, and for
// each of the first certs slugs of certbank.Slugs a certification.yaml with
// 4–6 domains and questions/questions.yaml with perCert questions. The same
// arguments always give the same bytes.
func Write(dir string, certs, perCert int, seed int64) error {
	if certs < 0 || certs > len(certbank.Slugs) {
		return fmt.Errorf("synth: certs must be between 0 and %d, not %d", len(certbank.Slugs), certs)
	}
	if perCert < 0 {
		return fmt.Errorf("synth: perCert must not be negative, not %d", perCert)
	}
	g := &gen{rnd: rand.New(rand.NewPCG(uint64(seed), 0x5eed_ce47_ba4c))}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "site.yaml"), []byte(siteYAML), 0o644); err != nil {
		return err
	}
	for _, slug := range certbank.Slugs[:certs] {
		cdir := filepath.Join(dir, "certifications", slug)
		if err := os.MkdirAll(filepath.Join(cdir, "questions"), 0o755); err != nil {
			return err
		}
		cert := g.certification(slug)
		data, err := yaml.Marshal(cert)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(cdir, "certification.yaml"), data, 0o644); err != nil {
			return err
		}
		qs := questionFile{Questions: make([]question, perCert)}
		for i := range qs.Questions {
			qs.Questions[i] = g.question(cert.Domains)
		}
		data, err = yaml.Marshal(qs)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(cdir, "questions", "questions.yaml"), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// The YAML shapes of content/ (see generator.Load), in its field order.
type certification struct {
	Slug          string   `yaml:"slug"`
	Name          string   `yaml:"name"`
	Provider      string   `yaml:"provider"`
	ExamCode      string   `yaml:"exam_code"`
	ExamStatus    string   `yaml:"exam_status"`
	ExamMinutes   int      `yaml:"exam_minutes"`
	ExamQuestions int      `yaml:"exam_questions"`
	Summary       string   `yaml:"summary"`
	Domains       []domain `yaml:"domains"`
}

type domain struct {
	Name       string      `yaml:"name"`
	Weight     int         `yaml:"weight"`
	Objectives []objective `yaml:"objectives"`
}

type objective struct {
	Code string `yaml:"code"`
	Name string `yaml:"name"`
}

type questionFile struct {
	Questions []question `yaml:"questions"`
}

type question struct {
	ID           string         `yaml:"id"`
	Domain       string         `yaml:"domain"`
	Objective    string         `yaml:"objective"`
	Tests        string         `yaml:"tests"`
	Difficulty   string         `yaml:"difficulty"`
	Question     string         `yaml:"question"`
	Options      options        `yaml:"options"`
	Answer       string         `yaml:"answer"`
	Explanation  string         `yaml:"explanation"`
	Verification []verification `yaml:"verification"`
}

type options struct {
	A string `yaml:"A"`
	B string `yaml:"B"`
	C string `yaml:"C"`
	D string `yaml:"D"`
}

type verification struct {
	Solver string `yaml:"solver"`
	Answer string `yaml:"answer"`
	Date   string `yaml:"date"`
}

type gen struct{ rnd *rand.Rand }

// providers maps a slug's first word to its neutral provider name.
var providers = map[string]string{
	"cloudone": "CloudOne", "cloudtwo": "CloudTwo", "cloudthree": "CloudThree", "vendorfour": "VendorFour",
	"vendorfive": "VendorFive", "orchestrator": "Orchestrator", "pmbody": "PMBody", "pmp": "PMBody",
	"crmvendor": "CRMVendor", "cissp": "SecBody", "scrum": "ScrumBody", "iac": "IaCVendor",
}

func (g *gen) certification(slug string) certification {
	first, _, _ := strings.Cut(slug, "-")
	prov := providers[first]
	if prov == "" {
		prov = "Synthetic"
	}
	c := certification{
		Slug:          slug,
		Name:          "Synthetic " + strings.ToUpper(slug[:1]) + slug[1:],
		Provider:      prov,
		ExamCode:      fmt.Sprintf("SYN-%03d", g.rnd.IntN(1000)),
		ExamStatus:    "current",
		ExamMinutes:   60 + 15*g.rnd.IntN(9),
		ExamQuestions: 50 + 5*g.rnd.IntN(20),
		Summary:       g.sentence(25, 35, "."),
	}
	n := 4 + g.rnd.IntN(3) // 4–6 domains
	left := 100
	for i := 0; i < n; i++ {
		w := left
		if i < n-1 {
			// Between 10 and what leaves at least 10 for each later domain.
			w = 10 + g.rnd.IntN(left-10*(n-i)+1)
			w = min(w, 40)
		}
		left -= w
		d := domain{Name: fmt.Sprintf("%s (%d)", g.title(), i+1), Weight: w}
		for j := range 4 + g.rnd.IntN(5) { // 4–8 objectives
			d.Objectives = append(d.Objectives, objective{Code: fmt.Sprintf("%d.%d", i+1, j+1), Name: g.sentence(6, 10, "")})
		}
		c.Domains = append(c.Domains, d)
	}
	return c
}

var difficulties = []string{"easy", "medium", "medium", "hard"}

func (g *gen) question(doms []domain) question {
	ans := "ABCD"[g.rnd.IntN(4)]
	dom := doms[g.rnd.IntN(len(doms))]
	q := question{
		ID:         g.uuid(),
		Domain:     dom.Name,
		Objective:  dom.Objectives[g.rnd.IntN(len(dom.Objectives))].Code,
		Tests:      g.sentence(6, 10, ""),
		Difficulty: difficulties[g.rnd.IntN(len(difficulties))],
		Question:   g.text(34, 46, "?"),
		Options: options{
			A: g.text(7, 13, ""), B: g.text(7, 13, ""), C: g.text(7, 13, ""), D: g.text(7, 13, ""),
		},
		Answer: string(ans),
	}
	var ex strings.Builder
	fmt.Fprintf(&ex, "%c is correct because %s.", ans, g.words(10, 14))
	for _, l := range "ABCD" {
		if byte(l) != ans {
			fmt.Fprintf(&ex, " %c is wrong because %s.", l, g.words(14, 18))
		}
	}
	q.Explanation = g.fitWords(ex.String(), 70, 90)
	if g.quoted() {
		q.Explanation = "Key point: " + q.Explanation
	}
	day := 1 + g.rnd.IntN(20)
	q.Verification = []verification{
		{Solver: "synthetic-solver-1", Answer: q.Answer, Date: fmt.Sprintf("2026-10-%02d", day)},
		{Solver: "synthetic-solver-2", Answer: q.Answer, Date: fmt.Sprintf("2026-10-%02d", day+1)},
	}
	return q
}

// quoted reports, for about 22% of strings, that this one should contain
// ": " so that yaml.v3 must single-quote it.
func (g *gen) quoted() bool { return g.rnd.IntN(100) < 22 }

// text is a sentence of min–max words ending in end; about 22% of texts get
// a "Label: " prefix, which yaml.v3 writes single-quoted.
func (g *gen) text(min, max int, end string) string {
	if g.quoted() {
		return "Scenario: " + g.sentence(min-1, max-1, end)
	}
	return g.sentence(min, max, end)
}

func (g *gen) sentence(min, max int, end string) string {
	s := g.words(min, max)
	return strings.ToUpper(s[:1]) + s[1:] + end
}

func (g *gen) words(min, max int) string {
	n := min + g.rnd.IntN(max-min+1)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = vocabulary[g.rnd.IntN(len(vocabulary))]
	}
	return strings.Join(ws, " ")
}

// fitWords pads or trims s to between min and max words.
func (g *gen) fitWords(s string, min, max int) string {
	ws := strings.Fields(s)
	want := min + g.rnd.IntN(max-min+1)
	for len(ws) < want {
		ws = append(ws, vocabulary[g.rnd.IntN(len(vocabulary))])
	}
	ws = ws[:want]
	out := strings.Join(ws, " ")
	if !strings.HasSuffix(out, ".") {
		out += "."
	}
	return out
}

func (g *gen) title() string {
	n := 2 + g.rnd.IntN(3)
	ws := make([]string, n)
	for i := range ws {
		w := vocabulary[g.rnd.IntN(len(vocabulary))]
		ws[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(ws, " ")
}

// uuid returns a random version 4 UUID in lowercase.
func (g *gen) uuid() string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		v := g.rnd.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

var vocabulary = strings.Fields(`
access account administrator alert analysis application architecture archive audit authentication
authorization availability backup bandwidth baseline batch boundary bucket budget cache capacity
certificate change channel checkpoint cipher classification client cluster compliance component
configuration connection console container continuity control controller cost credential customer
dashboard data database deployment design device directory disaster domain downtime encryption
endpoint engineer environment event evidence exception failover feature firewall framework function
gateway governance group hardware health host identity image incident index infrastructure
instance integrity interface inventory isolation key latency layer lifecycle load log maintenance
management message metric migration model monitoring namespace network node notification object
operator outage owner package partition password patch payload performance permission pipeline
platform policy pool portal priority privilege process project protocol provider queue quota
record recovery region registry release replica report repository request requirement resource
response retention review risk role rollback route rule runtime scaling schedule schema scope
secret segment sensor server service session snapshot software stakeholder storage stream subnet
subscription support system table team template tenant test threat throughput ticket token topology
traffic transaction trigger trust tunnel update upgrade user validation vault vendor version volume
vulnerability workload zone the a an of to in for with on by from across before after during which
that each every new existing primary secondary internal external shared dedicated regional global
temporary persistent automated manual encrypted private public critical minimal redundant scalable
`)

// siteYAML is a complete site.yaml in the shape of content/site.yaml.
const siteYAML = `name: certbank
description: Synthetic bank for benchmarks and tests; never published.
base_url: https://synthetic.certbank.example
functions_url: https://synthetic.certbank.example
mcp_url: https://synthetic.certbank.example
contact: support@certbank.example
mcp_package: mcp-remote
exam_currency_verified: 2026-11-01
free_sample_size: 20
quality:
  min_agreeing_solvers: 2
  method: independent blind solvers agree with the stored answer
  format: single best answer, options A-D, explanation of every option
pricing:
  x402:
    - questions: 10
      amount: 10000
    - questions: 25
      amount: 20000
    - questions: 50
      amount: 40000
  no_answer_discount_percent: 30
payment:
  network: base-sepolia
  pay_to: "0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c"
  max_timeout_seconds: 300
  description: IT certification practice questions
tiers:
  - name: free
    title: Free
    price: "0"
    requests_per_minute: 10
    requests_per_month: 100
    unique_questions: 50
    max_limit: 10
  - name: developer
    title: Developer
    price: "29 USD per month"
    requests_per_minute: 60
    requests_per_month: 10000
    unique_questions: 5000
    max_limit: 50
  - name: enterprise
    title: Enterprise
    price: "199 USD per month"
    requests_per_minute: 300
    requests_per_month: unlimited
    unique_questions: unlimited
    max_limit: 100
    pagination: true
    bulk_export: true
`
