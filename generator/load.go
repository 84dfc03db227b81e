package generator

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/certbank/certbank"
	"gopkg.in/yaml.v3"
)

// Content is a loaded, validated content tree.
type Content struct {
	Site           certbank.Site
	Certifications []certbank.Certification // sorted by slug
	Questions      []certbank.Question      // sorted by certification slug, then file and position
	Sources        []Source                 // Sources[i] is where Questions[i] is written
}

// Source is where a question is written.
type Source struct {
	File string // as shown in messages, e.g. content/certifications/cissp/questions/a.yaml
	Line int
}

// Certification returns the certification with the given slug.
func (c *Content) Certification(slug string) *certbank.Certification {
	for i := range c.Certifications {
		if c.Certifications[i].Slug == slug {
			return &c.Certifications[i]
		}
	}
	return nil
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Load reads the content tree in fsys (the content directory itself; prefix
// is how its files are named in messages, e.g. "content") and validates it.
// Every problem in the tree is returned at once as Problems.
func Load(fsys fs.FS, prefix string) (*Content, error) {
	name := func(p string) string { return path.Join(prefix, p) }
	var probs Problems
	c := &Content{}

	data, err := fs.ReadFile(fsys, "site.yaml")
	if err != nil {
		probs.add(name("site.yaml"), 0, "cannot read the site settings (%v); create site.yaml in the content directory", unwrapPath(err))
	} else {
		r := &reader{file: name("site.yaml")}
		c.Site = parseSite(r, data)
		probs = append(probs, r.probs...)
	}

	dirs, err := fs.ReadDir(fsys, "certifications")
	if err != nil {
		probs.add(name("certifications"), 0, "cannot read the certifications directory (%v); create certifications/<slug>/certification.yaml", unwrapPath(err))
	}
	type job struct {
		slug, file string
	}
	var jobs []job
	for _, d := range dirs {
		slug := d.Name()
		dir := path.Join("certifications", slug)
		if !d.IsDir() {
			probs.add(name(dir), 0, "unexpected file; the certifications directory holds only one directory per certification slug")
			continue
		}
		if !certbank.KnownSlug(slug) {
			probs.add(name(dir), 0, "unknown certification slug %q; use one of the 26 slugs of SPEC.md §2.1 (e.g. %s)", slug, strings.Join(certbank.Slugs[:3], ", "))
			continue
		}
		cdata, err := fs.ReadFile(fsys, path.Join(dir, "certification.yaml"))
		if err != nil {
			probs.add(name(path.Join(dir, "certification.yaml")), 0, "cannot read it (%v); every certification directory needs a certification.yaml", unwrapPath(err))
			continue
		}
		r := &reader{file: name(path.Join(dir, "certification.yaml"))}
		cert := parseCertification(r, cdata, slug)
		probs = append(probs, r.probs...)
		c.Certifications = append(c.Certifications, cert)
		files, err := fs.ReadDir(fsys, path.Join(dir, "questions"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			probs.add(name(path.Join(dir, "questions")), 0, "cannot read it: %v", unwrapPath(err))
		}
		for _, f := range files {
			if f.IsDir() || !(strings.HasSuffix(f.Name(), ".yaml") || strings.HasSuffix(f.Name(), ".yml")) {
				probs.add(name(path.Join(dir, "questions", f.Name())), 0, "unexpected entry; question files end in .yaml")
				continue
			}
			jobs = append(jobs, job{slug, path.Join(dir, "questions", f.Name())})
		}
	}
	sort.Slice(c.Certifications, func(i, j int) bool { return c.Certifications[i].Slug < c.Certifications[j].Slug })
	for i := range c.Certifications {
		if c.Certifications[i].TargetQuestions == 0 {
			c.Certifications[i].TargetQuestions = c.Site.TargetQuestions
		}
	}

	// Decode question files in parallel; results keep the job order.
	type result struct {
		qs    []certbank.Question
		srcs  []Source
		probs Problems
	}
	results := make([]result, len(jobs))
	certOf := map[string]*certbank.Certification{}
	for i := range c.Certifications {
		certOf[c.Certifications[i].Slug] = &c.Certifications[i]
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := jobs[i]
				r := &reader{file: name(j.file)}
				data, err := fs.ReadFile(fsys, j.file)
				if err != nil {
					r.add(nil, "cannot read it: %v", unwrapPath(err))
				} else {
					results[i].qs, results[i].srcs = parseQuestions(r, data, certOf[j.slug])
				}
				results[i].probs = r.probs
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()

	n := 0
	for _, res := range results {
		n += len(res.qs)
	}
	c.Questions = make([]certbank.Question, 0, n)
	c.Sources = make([]Source, 0, n)
	for _, res := range results {
		c.Questions = append(c.Questions, res.qs...)
		c.Sources = append(c.Sources, res.srcs...)
		probs = append(probs, res.probs...)
	}
	// Ids are unique across the whole bank.
	first := make(map[string]int, n)
	for i := range c.Questions {
		id := c.Questions[i].ID
		if id == "" {
			continue
		}
		if j, dup := first[id]; dup {
			probs.add(c.Sources[i].File, c.Sources[i].Line, "duplicate id %s, already used at %s:%d; give this question a new UUID", id, c.Sources[j].File, c.Sources[j].Line)
			continue
		}
		first[id] = i
	}
	if len(probs) > 0 {
		probs.Sort()
		return c, probs
	}
	return c, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func parseDoc(r *reader, data []byte) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line := 0
		msg := err.Error()
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1]) // the pattern matched digits
			msg = yamlLineRE.ReplaceAllString(msg, "")
		}
		msg = strings.TrimSpace(strings.TrimPrefix(msg, "yaml:"))
		if yamlParserProblems[msg] {
			// yaml.v3 reports parser (not scanner) errors with a 0-based
			// line, and none at all on the first line.
			line++
		}
		r.probs.add(r.file, line, "not valid YAML: %s; check indentation and quote values that contain \": \"", msg)
		return nil
	}
	if len(doc.Content) == 0 {
		r.add(nil, "the file is empty")
		return nil
	}
	return doc.Content[0]
}

var yamlLineRE = regexp.MustCompile(`line (\d+):`)

// yamlParserProblems are the messages of yaml.v3's parser errors, whose
// line numbers it reports 0-based (gopkg.in/yaml.v3 v3.0.1 decode.go fail).
var yamlParserProblems = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"did not find expected key":              true,
	"did not find expected '-' indicator":    true,
	"did not find expected node content":     true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found duplicate %YAML directive":        true,
	"found duplicate %TAG directive":         true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

func parseSite(r *reader, data []byte) certbank.Site {
	var s certbank.Site
	root := parseDoc(r, data)
	if root == nil {
		return s
	}
	const what = "site.yaml"
	m := r.fields(root, what, "name", "description", "base_url", "functions_url", "mcp_url", "contact",
		"exam_currency_verified", "quality", "free_sample_size", "target_questions", "pricing", "tiers", "payment", "mcp_package")
	if m == nil {
		return s
	}
	s.Name = r.str(m, root, "name", what, true)
	s.Description = r.str(m, root, "description", what, true)
	s.BaseURL = strings.TrimRight(r.str(m, root, "base_url", what, true), "/")
	s.FunctionsURL = strings.TrimRight(r.str(m, root, "functions_url", what, false), "/")
	s.MCPURL = strings.TrimRight(r.str(m, root, "mcp_url", what, false), "/")
	for _, u := range []struct{ key, v string }{{"base_url", s.BaseURL}, {"functions_url", s.FunctionsURL}, {"mcp_url", s.MCPURL}} {
		if u.v != "" && !strings.HasPrefix(u.v, "http://") && !strings.HasPrefix(u.v, "https://") {
			r.add(m[u.key], "%q must be an absolute http(s) URL, not %q", u.key, u.v)
		}
	}
	if s.FunctionsURL == "" {
		s.FunctionsURL = s.BaseURL
	}
	if s.MCPURL == "" {
		s.MCPURL = s.BaseURL
	}
	s.Contact = r.str(m, root, "contact", what, true)
	s.ExamCurrencyVerified = r.date(m, root, "exam_currency_verified", what, true)
	s.MCPPackage = r.str(m, root, "mcp_package", what, false)
	s.FreeSampleSize = 20
	if _, ok := m["free_sample_size"]; ok {
		s.FreeSampleSize = r.integer(m, root, "free_sample_size", what, false, false)
	}
	s.TargetQuestions = DefaultTargetQuestions
	if _, ok := m["target_questions"]; ok {
		s.TargetQuestions = r.integer(m, root, "target_questions", what, false, false)
		if s.TargetQuestions < 1 {
			r.add(m["target_questions"], "target_questions must be at least 1 (the number of questions each certification aims at)")
		}
	}
	s.Quality.MinAgreeingSolvers = 2
	if q := m["quality"]; q != nil {
		qm := r.fields(q, "quality", "min_agreeing_solvers", "method", "format")
		if _, ok := qm["min_agreeing_solvers"]; ok {
			s.Quality.MinAgreeingSolvers = r.integer(qm, q, "min_agreeing_solvers", "quality", false, false)
		}
		s.QualityMethod = r.str(qm, q, "method", "quality", false)
		s.QualityFormat = r.str(qm, q, "format", "quality", false)
	}
	if p := m["pricing"]; p != nil {
		pm := r.fields(p, "pricing", "x402", "no_answer_discount_percent")
		s.Pricing.NoAnswerDiscountPercent = r.integer(pm, p, "no_answer_discount_percent", "pricing", true, false)
		if s.Pricing.NoAnswerDiscountPercent > 100 {
			r.add(pm["no_answer_discount_percent"], "no_answer_discount_percent must be between 0 and 100")
		}
		for _, e := range r.list(pm["x402"], "x402", "pricing") {
			em := r.fields(e, "a price entry", "questions", "amount")
			q := r.integer(em, e, "questions", "a price entry", true, false)
			a := r.integer(em, e, "amount", "a price entry (atomic USDC units: 10000 = 0.01 USDC)", true, false)
			if q == 0 || a == 0 {
				r.add(e, "a price entry needs questions and amount greater than 0")
			}
			s.Pricing.Entries = append(s.Pricing.Entries, certbank.PriceEntry{Questions: q, Amount: certbank.USDC(a)})
		}
		if len(s.Pricing.Entries) == 0 {
			r.add(p, "pricing.x402 must list at least one entry with questions and amount")
		}
	} else {
		r.add(root, "site.yaml is missing \"pricing\"; add the x402 price list")
	}
	seenTier := map[string]bool{}
	for _, t := range r.list(m["tiers"], "tiers", what) {
		tm := r.fields(t, "a tier", "name", "title", "price", "requests_per_minute", "requests_per_month",
			"unique_questions", "max_limit", "pagination", "bulk_export")
		tier := certbank.Tier{
			Name:            r.str(tm, t, "name", "a tier", true),
			Title:           r.str(tm, t, "title", "a tier", true),
			Price:           r.str(tm, t, "price", "a tier", false),
			PerMinute:       r.integer(tm, t, "requests_per_minute", "a tier", true, false),
			PerMonth:        r.integer(tm, t, "requests_per_month", "a tier", true, true),
			UniqueQuestions: r.integer(tm, t, "unique_questions", "a tier", true, true),
			MaxLimit:        r.integer(tm, t, "max_limit", "a tier", true, false),
			Pagination:      r.boolean(tm, "pagination", "a tier"),
			BulkExport:      r.boolean(tm, "bulk_export", "a tier"),
		}
		if seenTier[tier.Name] {
			r.add(t, "tier %q is defined twice", tier.Name)
		}
		seenTier[tier.Name] = true
		if tier.MaxLimit < 1 && tier.Name != "" {
			r.add(t, "tier %q needs max_limit of at least 1", tier.Name)
		}
		s.Tiers = append(s.Tiers, tier)
	}
	if !seenTier[certbank.TierFree] {
		r.add(root, "site.yaml must define a tier named %q (the tier of every new key)", certbank.TierFree)
	}
	if p := m["payment"]; p != nil {
		pm := r.fields(p, "payment", "network", "pay_to", "max_timeout_seconds", "description")
		s.Payment.Network = r.str(pm, p, "network", "payment", true)
		switch s.Payment.Network {
		case "base", "base-mainnet", "base-sepolia", "":
		default:
			r.add(pm["network"], "payment network %q is not supported; use base or base-sepolia", s.Payment.Network)
		}
		if s.Payment.Network == "base-mainnet" {
			s.Payment.Network = "base"
		}
		s.Payment.PayTo = r.str(pm, p, "pay_to", "payment", false)
		if s.Payment.PayTo != "" && !addrRE.MatchString(s.Payment.PayTo) {
			r.add(pm["pay_to"], "pay_to must be a 0x-prefixed 20-byte hex address, not %q", s.Payment.PayTo)
		}
		s.Payment.MaxTimeoutSeconds = 300
		if _, ok := pm["max_timeout_seconds"]; ok {
			s.Payment.MaxTimeoutSeconds = r.integer(pm, p, "max_timeout_seconds", "payment", false, false)
			if s.Payment.MaxTimeoutSeconds < 60 {
				r.add(pm["max_timeout_seconds"], "max_timeout_seconds must be at least 60 so slow wallets can sign in time")
			}
		}
		s.Payment.Description = r.str(pm, p, "description", "payment", false)
	} else {
		r.add(root, "site.yaml is missing \"payment\"; add its network (base-sepolia for development)")
	}
	return s
}

var addrRE = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)

// DefaultTargetQuestions is how many questions a certification aims at when
// site.yaml does not say (SPEC.md: about 500).
const DefaultTargetQuestions = 500

// objectiveCodeRE is what an objective code looks like: "3.2", "1.10", "2.3.1", "D1".
var objectiveCodeRE = regexp.MustCompile(`^[A-Za-z0-9]+(\.[A-Za-z0-9]+)*$`)

func parseCertification(r *reader, data []byte, slug string) certbank.Certification {
	c := certbank.Certification{Slug: slug}
	root := parseDoc(r, data)
	if root == nil {
		return c
	}
	const what = "certification.yaml"
	m := r.fields(root, what, "slug", "name", "provider", "exam_code", "exam_status", "retirement_date",
		"successor", "exam_note", "exam_minutes", "exam_questions", "passing_score", "summary", "target_questions", "domains")
	if m == nil {
		return c
	}
	if s := r.str(m, root, "slug", what, true); s != "" && s != slug {
		r.add(m["slug"], "slug %q does not match its directory %q; make them equal", s, slug)
	}
	c.Name = r.str(m, root, "name", what, true)
	c.Provider = r.str(m, root, "provider", what, true)
	c.ExamCode = r.str(m, root, "exam_code", what, false)
	c.PassingScore = r.str(m, root, "passing_score", what, false)
	c.Summary = r.str(m, root, "summary", what, false)
	c.ExamMinutes = r.integer(m, root, "exam_minutes", what, true, false)
	c.ExamQuestions = r.integer(m, root, "exam_questions", what, true, false)
	if _, ok := m["target_questions"]; ok {
		c.TargetQuestions = r.integer(m, root, "target_questions", what, false, false)
		if c.TargetQuestions < 1 {
			r.add(m["target_questions"], "target_questions must be at least 1; remove it to use site.yaml's")
		}
	}
	switch st := r.str(m, root, "exam_status", what, true); st {
	case "current", "retiring":
		c.Status = certbank.ExamStatus(st)
	case "":
	default:
		r.add(m["exam_status"], "exam_status %q must be current or retiring", st)
	}
	c.RetirementDate = r.date(m, root, "retirement_date", what, c.Status == certbank.Retiring)
	c.Successor = r.str(m, root, "successor", what, c.Status == certbank.Retiring)
	c.ExamNote = r.str(m, root, "exam_note", what, c.Status == certbank.Retiring)
	if c.Status == certbank.Current {
		for _, k := range []string{"retirement_date", "successor"} {
			if _, ok := m[k]; ok {
				r.add(m[k], "%q is only for exam_status: retiring; remove it or change the status", k)
			}
		}
	}
	total := 0
	seen := map[string]bool{}
	dn := m["domains"]
	if dn == nil {
		r.add(root, "certification.yaml is missing \"domains\"; list the exam's published domains with their weights")
	}
	codes := map[string]bool{}
	for _, d := range r.list(dn, "domains", what) {
		dm := r.fields(d, "a domain", "name", "weight", "objectives")
		dom := certbank.Domain{Name: r.str(dm, d, "name", "a domain", true), Weight: r.integer(dm, d, "weight", "a domain", true, false)}
		if dm != nil && dm["objectives"] == nil {
			r.add(d, "domain %q lists no objectives; add \"objectives:\" with the exam guide's numbered objectives (code and name)", dom.Name)
		}
		for _, o := range r.list(dm["objectives"], "objectives", "a domain") {
			om := r.fields(o, "an objective", "code", "name")
			obj := certbank.Objective{Code: r.str(om, o, "code", "an objective", true), Name: r.str(om, o, "name", "an objective", true)}
			switch {
			case obj.Code == "":
			case !objectiveCodeRE.MatchString(obj.Code):
				r.add(om["code"], "objective code %q must look like the guide's numbering, e.g. \"3.2\"", obj.Code)
			case codes[obj.Code]:
				r.add(om["code"], "objective code %q is used twice; codes are unique within a certification", obj.Code)
			}
			codes[obj.Code] = true
			dom.Objectives = append(dom.Objectives, obj)
		}
		if seen[dom.Name] {
			r.add(d, "domain %q is listed twice", dom.Name)
		}
		seen[dom.Name] = true
		if dom.Weight < 1 && dm["weight"] != nil {
			r.add(dm["weight"], "domain weight must be at least 1 percent")
		}
		total += dom.Weight
		c.Domains = append(c.Domains, dom)
	}
	if len(c.Domains) > 0 && total != 100 {
		r.add(dn, "domain weights add up to %d; they must add up to 100", total)
	}
	return c
}

var questionFields = []string{"id", "domain", "objective", "tests", "difficulty", "question", "options", "answer", "explanation", "references", "verification", "calibration", "measured"}

// Bounds of a question's tests line.
const minTests, maxTests = 10, 140

func parseQuestions(r *reader, data []byte, cert *certbank.Certification) ([]certbank.Question, []Source) {
	root := parseDoc(r, data)
	if root == nil {
		return nil, nil
	}
	m := r.fields(root, "a question file", "questions")
	if m == nil {
		return nil, nil
	}
	items := r.list(m["questions"], "questions", "a question file")
	if m["questions"] == nil {
		r.add(root, "a question file needs a \"questions\" list")
	}
	qs := make([]certbank.Question, 0, len(items))
	srcs := make([]Source, 0, len(items))
	for _, n := range items {
		q := parseQuestion(r, n, cert)
		qs = append(qs, q)
		srcs = append(srcs, Source{File: r.file, Line: n.Line})
	}
	return qs, srcs
}

func parseQuestion(r *reader, n *yaml.Node, cert *certbank.Certification) certbank.Question {
	q := certbank.Question{Certification: cert.Slug}
	m := r.fields(n, "a question", questionFields...)
	if m == nil {
		return q
	}
	const what = "a question"
	q.ID = r.str(m, n, "id", what, true)
	if q.ID != "" && !uuidRE.MatchString(q.ID) {
		r.add(m["id"], "id %q is not a lowercase UUID; generate one with: python3 -c 'import uuid;print(uuid.uuid4())'", q.ID)
	}
	q.Domain = r.str(m, n, "domain", what, true)
	if q.Domain != "" && len(cert.Domains) > 0 && !cert.HasDomain(q.Domain) {
		names := make([]string, len(cert.Domains))
		for i, d := range cert.Domains {
			names[i] = fmt.Sprintf("%q", d.Name)
		}
		r.add(m["domain"], "domain %q is not one of %s's domains: %s", q.Domain, cert.Slug, strings.Join(names, ", "))
	}
	q.Objective = r.str(m, n, "objective", what, true)
	if q.Objective != "" && q.Domain != "" && cert.HasDomain(q.Domain) {
		if _, dom, ok := cert.Objective(q.Objective); !ok || dom.Name != q.Domain {
			d, _ := cert.Domain(q.Domain)
			codes := make([]string, len(d.Objectives))
			for i, o := range d.Objectives {
				codes[i] = o.Code
			}
			where := "is not an objective of " + cert.Slug
			if ok {
				where = fmt.Sprintf("belongs to domain %q", dom.Name)
			}
			list := strings.Join(codes, ", ")
			if list == "" {
				list = "none are listed in certification.yaml yet"
			}
			r.add(m["objective"], "objective %q %s; a question of domain %q names one of its objectives: %s", q.Objective, where, q.Domain, list)
		}
	}
	q.Tests = r.str(m, n, "tests", what, true)
	if t := q.Tests; t != "" {
		if n := len([]rune(t)); n < minTests || n > maxTests || strings.ContainsAny(t, "\n\r") {
			r.add(m["tests"], "tests is %d characters; write one line of %d to %d characters naming the fact or skill the question checks", n, minTests, maxTests)
		}
	}
	if d := r.str(m, n, "difficulty", what, true); d != "" {
		diff, err := certbank.ParseDifficulty(d)
		if err != nil {
			r.add(m["difficulty"], "difficulty %q must be easy, medium or hard", d)
		}
		q.Difficulty = diff
	}
	q.Stem = r.str(m, n, "question", what, true)
	if on := m["options"]; on != nil {
		// When options is not a mapping, fields has said so; say it once.
		if om := r.fields(on, "options", "A", "B", "C", "D"); om != nil {
			for i, l := range certbank.Letters {
				if _, ok := om[string(l)]; !ok {
					r.add(on, "option %s is missing; every question has exactly four options A, B, C and D", l)
					continue
				}
				q.Options[i] = r.str(om, on, string(l), "options", true)
			}
		}
	} else {
		r.add(n, "a question is missing \"options\"; add options A, B, C and D")
	}
	if a := r.str(m, n, "answer", what, true); a != "" {
		l := certbank.Letter(a)
		if l.Index() < 0 {
			r.add(m["answer"], "answer %q must be one of the option letters A, B, C, D", a)
		}
		q.Answer = l
	}
	q.Explanation = r.str(m, n, "explanation", what, true)
	q.References = r.strings(m["references"], "references", what)
	for _, v := range r.list(m["verification"], "verification", what) {
		vm := r.fields(v, "a verification entry", "solver", "answer", "date", "override")
		ver := certbank.Verification{
			Solver:   r.str(vm, v, "solver", "a verification entry", true),
			Date:     r.date(vm, v, "date", "a verification entry", true),
			Override: r.str(vm, v, "override", "a verification entry", false),
		}
		if a := r.str(vm, v, "answer", "a verification entry", true); a != "" {
			ver.Answer = certbank.Letter(a)
			if ver.Answer.Index() < 0 {
				r.add(vm["answer"], "verification answer %q must be one of A, B, C, D", a)
			}
		}
		q.Verifications = append(q.Verifications, ver)
	}
	for _, v := range r.list(m["calibration"], "calibration", what) {
		const cw = "a calibration entry"
		vm := r.fields(v, cw, "rater", "difficulty", "level", "date")
		cal := certbank.Calibration{
			Rater: r.str(vm, v, "rater", cw, true),
			Date:  r.date(vm, v, "date", cw, true),
		}
		if d := r.str(vm, v, "difficulty", cw, true); d != "" {
			diff, err := certbank.ParseDifficulty(d)
			if err != nil {
				r.add(vm["difficulty"], "calibration difficulty %q must be easy, medium or hard", d)
			}
			cal.Difficulty = diff
		}
		if l := r.str(vm, v, "level", cw, true); l != "" {
			lvl, err := certbank.ParseLevel(l)
			if err != nil {
				r.add(vm["level"], "calibration level %q must be recall, apply or analyse", l)
			}
			cal.Level = lvl
		}
		q.Calibrations = append(q.Calibrations, cal)
	}
	if mn := m["measured"]; mn != nil {
		const mw = "measured"
		mm := r.fields(mn, mw, "responses", "p", "difficulty", "date")
		ms := &certbank.Measurement{Responses: r.integer(mm, mn, "responses", mw, true, false), Date: r.date(mm, mn, "date", mw, true)}
		if ps := r.str(mm, mn, "p", mw, true); ps != "" {
			p, err := strconv.ParseFloat(ps, 64)
			if err != nil || p < 0 || p > 1 {
				r.add(mm["p"], "measured p %q must be a share from 0 to 1", ps)
			}
			ms.P = p
		}
		if d := r.str(mm, mn, "difficulty", mw, true); d != "" {
			diff, err := certbank.ParseDifficulty(d)
			if err != nil {
				r.add(mm["difficulty"], "measured difficulty %q must be easy, medium or hard", d)
			}
			ms.Difficulty = diff
		}
		if ms.Responses < 1 && mm != nil {
			r.add(mn, "measured responses must be at least 1")
		}
		q.Measured = ms
	}
	return q
}
