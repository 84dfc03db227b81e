package generator

import (
	"fmt"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/certbank/certbank"
)

// Finding is one item-writing flaw found by Lint.
type Finding struct {
	Rule string // short rule name, e.g. "key-longest"
	Problem
}

func (f Finding) String() string { return f.Problem.String() + " [" + f.Rule + "]" }

// Lint bounds.
const (
	minStem, maxStem     = 40, 600
	minOption, maxOption = 1, 200
	minExplanation       = 200
	maxKeyLongestShare   = 0.30
	minLetterShare       = 0.15
	maxLetterShare       = 0.35
	// From this many questions on, each letter is the key of 20–30 %.
	balancedBankSize                         = 200
	minLetterShareLarge, maxLetterShareLarge = 0.20, 0.30
	nearDuplicateThreshold                   = 0.85
)

var (
	allNoneRE  = regexp.MustCompile(`(?i)\b(all|none) of (the )?(above|these|options|answers)\b|\bboth [a-d] and [a-d]\b|\b[a-d] and [a-d] (are|only)\b|^neither\b`)
	negativeRE = regexp.MustCompile(`(?i)\b(not|except|least|false|incorrect)\b`)
	absoluteRE = regexp.MustCompile(`(?i)\b(always|never)\b`)
	// vendorRE lists real vendor and proprietary product names that the
	// neutral providers' questions must not use (DESIGN.md §3).
	vendorRE = regexp.MustCompile(`(?i)\b(aws|amazon|azure|microsoft|google|gcp|comptia|cisco|isc2|salesforce|hashicorp|terraform|ec2|s3 bucket|amazon s3|lambda function|entra|bigquery|vertex ai|sagemaker|bedrock|cloudformation|cloudwatch|dynamodb|intune|ios xe|visualforce|apex class|pmbok)\b`)
)

// neutralProviders are the providers whose questions must be vendor neutral.
var neutralProviders = map[string]bool{"CloudOne": true, "CloudTwo": true, "CloudThree": true, "VendorFour": true,
	"VendorFive": true, "Orchestrator": true, "PMBody": true, "CRMVendor": true, "ScrumBody": true, "IaCVendor": true, "SecBody": true}

// Lint returns the item-writing flaws of the content: per question, per
// certification and across the whole bank. Findings are sorted by file and
// line.
func Lint(c *Content) []Finding {
	var fs []Finding
	add := func(rule string, src Source, format string, args ...any) {
		fs = append(fs, Finding{rule, Problem{src.File, src.Line, fmt.Sprintf(format, args...)}})
	}
	byCert := map[string][]int{}
	for i := range c.Questions {
		byCert[c.Questions[i].Certification] = append(byCert[c.Questions[i].Certification], i)
	}
	// Questions are linted in parallel, in contiguous chunks whose findings
	// are joined in order, so the result is the same as one by one.
	workers := max(1, min(runtime.GOMAXPROCS(0), len(c.Questions)/256))
	chunks := make([][]Finding, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo, hi := w*len(c.Questions)/workers, (w+1)*len(c.Questions)/workers
			for i := lo; i < hi; i++ {
				q, src := &c.Questions[i], c.Sources[i]
				lintQuestion(q, c.Certification(q.Certification), func(rule, format string, args ...any) {
					chunks[w] = append(chunks[w], Finding{rule, Problem{src.File, src.Line, fmt.Sprintf(format, args...)}})
				})
			}
		}()
	}
	wg.Wait()
	for _, ch := range chunks {
		fs = append(fs, ch...)
	}
	var perCert []*[]Finding
	for _, cert := range c.Certifications {
		idx := byCert[cert.Slug]
		src := Source{File: "content/certifications/" + cert.Slug + "/certification.yaml", Line: 1}
		if len(c.Sources) > 0 {
			for _, i := range idx {
				src.File = strings.TrimSuffix(c.Sources[i].File, c.Sources[i].File[strings.Index(c.Sources[i].File, "/questions/"):]) + "/certification.yaml"
				break
			}
		}
		if msg := lintCurrency(&c.Site, &cert); msg != "" {
			add("exam-retired", src, "%s", msg)
		}
		if len(idx) == 0 {
			continue
		}
		// Each certification's rules run beside the others, and beside
		// the bank-wide near-duplicate search; findings join in order.
		var mine []Finding
		perCert = append(perCert, &mine)
		wg.Add(1)
		go func() {
			defer wg.Done()
			lintCertification(c, cert, idx, func(rule string, s Source, format string, args ...any) {
				if s.File == "" {
					s = src
				}
				mine = append(mine, Finding{rule, Problem{s.File, s.Line, fmt.Sprintf(format, args...)}})
			})
		}()
	}
	dups := nearDuplicates(c)
	wg.Wait()
	for _, p := range perCert {
		fs = append(fs, *p...)
	}
	fs = append(fs, dups...)
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].File != fs[j].File {
			return fs[i].File < fs[j].File
		}
		if fs[i].Line != fs[j].Line {
			return fs[i].Line < fs[j].Line
		}
		return fs[i].Rule < fs[j].Rule
	})
	return fs
}

func lintQuestion(q *certbank.Question, cert *certbank.Certification, add func(rule, format string, args ...any)) {
	stem := q.Stem
	if n := len([]rune(stem)); n < minStem || n > maxStem {
		add("stem-length", "question is %d characters; keep it between %d and %d", n, minStem, maxStem)
	}
	if s := strings.TrimSpace(stem); s != "" && !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, ":") {
		add("stem-focus", "question should end with \"?\" or \":\" so it can be answered before reading the options")
	}
	for _, m := range negativeRE.FindAllString(stem, -1) {
		if m != strings.ToUpper(m) {
			add("negative-stem", "negative word %q in the question; rephrase positively or write it in capitals (%s)", m, strings.ToUpper(m))
		}
	}
	for i, o := range q.Options {
		l := certbank.Letters[i]
		if n := len([]rune(o)); n < minOption || n > maxOption {
			add("option-length", "option %s is %d characters; keep options between %d and %d", l, n, minOption, maxOption)
		}
		if allNoneRE.MatchString(o) {
			add("all-none-above", "option %s uses \"all/none of the above\" or combines letters; write a standalone option", l)
		}
	}
	var opts [4]optionText
	for i, o := range q.Options {
		opts[i] = newOptionText(o)
	}
	for i := 0; i < 4; i++ {
		for j := i + 1; j < 4; j++ {
			if opts[i].same(&opts[j]) {
				add("duplicate-options", "options %s and %s are (nearly) the same; make every option distinct", certbank.Letters[i], certbank.Letters[j])
			}
		}
	}
	// Absolute words only in distractors are a testwise cue.
	if q.Answer.Index() >= 0 && !absoluteRE.MatchString(q.Options.Get(q.Answer)) {
		n := 0
		for i, o := range q.Options {
			if certbank.Letters[i] != q.Answer && absoluteRE.MatchString(o) {
				n++
			}
		}
		if n >= 2 {
			add("absolute-terms", "%d distractors say always or never and the key does not; this cues the answer", n)
		}
	}
	ex := q.Explanation
	if n := len([]rune(ex)); n < minExplanation {
		add("explanation-thin", "explanation is %d characters; explain why the answer is right and why each other option is wrong (at least %d)", n, minExplanation)
	}
	for i, l := range certbank.Letters {
		if l == q.Answer || q.Answer.Index() < 0 {
			continue
		}
		if !mentionsLetter(ex, l) && !strings.Contains(strings.ToLower(ex), strings.ToLower(firstWords(q.Options[i], 4))) {
			add("explanation-distractor", "explanation does not say why option %s is wrong; add \"%s is wrong because …\"", l, l)
		}
		if claimsCorrect(ex, l) {
			add("explanation-contradicts-key", "explanation calls option %s correct but the answer is %s", l, q.Answer)
		}
	}
	lintCues(q, add)
	lintCalibration(q, add)
	for _, t := range append([]string{stem, ex}, q.References...) {
		if old, now := supersededRef(t); old != "" {
			add("superseded-reference", "%q is superseded; cite %s (and check that the question still holds under it)", old, now)
			break
		}
	}
	if cert != nil && neutralProviders[cert.Provider] {
		for _, t := range append([]string{stem, ex}, q.Options[:]...) {
			if m := vendorName(t); m != "" {
				add("vendor-name", "%q names a real vendor or product; %s questions are vendor neutral (describe the service by what it does)", m, cert.Provider)
				break
			}
		}
	}
}

// superseded lists standards and guides that a newer revision replaced, with
// what to cite instead. A question must teach the revision in force (SPEC.md:
// "current revisions"); each entry's replacement was published before
// 2026-11-25. Extend it when a revision lands.
var superseded = []struct {
	re  *regexp.Regexp
	now string
}{
	{regexp.MustCompile(`(?i)\b800-61\s*(?:Rev\.?\s*|r)2\b`), "NIST SP 800-61 Rev. 3 (April 2025)"},
	{regexp.MustCompile(`(?i)\b800-63-3\b`), "NIST SP 800-63-4 (2025)"},
	{regexp.MustCompile(`(?i)\b800-88\s*(?:Rev\.?\s*|r)1\b`), "NIST SP 800-88 Rev. 2 (September 2025)"},
	{regexp.MustCompile(`(?i)\b800-53\s*(?:Rev\.?\s*|r)4\b`), "NIST SP 800-53 Rev. 5"},
	{regexp.MustCompile(`(?i)\b800-171\s*(?:Rev\.?\s*|r)2\b`), "NIST SP 800-171 Rev. 3 (May 2024)"},
	{regexp.MustCompile(`(?i)\bFIPS\s*186-4\b`), "FIPS 186-5 (2023)"},
	{regexp.MustCompile(`(?i)\b(?:CSF|Cybersecurity Framework)\s*(?:v(?:ersion)?\s*)?1\.1\b`), "NIST CSF 2.0 (February 2024)"},
	{regexp.MustCompile(`(?i)\bPCI\s*DSS\s*(?:v(?:ersion)?\s*)?(?:3\.2(?:\.1)?|4\.0)(?:[^.\d]|\.(?:\D|$)|$)`), "PCI DSS v4.0.1 (v4.0 retired at the end of 2024)"},
	{regexp.MustCompile(`(?i)\bISO/IEC\s*2700[12]:2013\b`), "the 2022 edition of ISO/IEC 27001 or 27002"},
	{regexp.MustCompile(`(?i)\bOWASP\s+Top\s+(?:10|Ten)\s*[-–:(]?\s*2017\b`), "the OWASP Top 10 2021 or later"},
	{regexp.MustCompile(`(?i)\bScrum Guide\s*(?:\(?\s*)?(?:2017|2013)\b`), "the 2020 Scrum Guide"},
}

// supersededRef returns the superseded citation in t and what replaces it,
// or "" when t cites none. Most texts cite none, so a cheap check comes first.
func supersededRef(t string) (old, now string) {
	if !strings.ContainsAny(t, "0123456789") {
		return "", ""
	}
	for _, s := range superseded {
		if m := s.re.FindString(t); m != "" {
			return strings.TrimRight(m, " ,;)"), s.now
		}
	}
	return "", ""
}

func mentionsLetter(ex string, l certbank.Letter) bool {
	re := letterREs[l.Index()]
	return re.MatchString(ex)
}

func claimsCorrect(ex string, l certbank.Letter) bool {
	// The expression needs "<l> is correct", "<l>) is the correct"…: most
	// explanations have none for a distractor's letter.
	for _, mid := range []string{" is correct", ") is correct", " is the correct", ") is the correct"} {
		if strings.Contains(ex, string(l)+mid) {
			return correctREs[l.Index()].MatchString(ex)
		}
	}
	return false
}

var letterREs, correctREs = func() ([]*regexp.Regexp, []*regexp.Regexp) {
	var a, b []*regexp.Regexp
	for _, l := range certbank.Letters {
		a = append(a, regexp.MustCompile(`(?:^|[^\p{L}])(?:[Oo]ption |\()?`+string(l)+`\)?(?:\s+(?:is|was|would|does|fails|only|describes|confuses|misses|ignores|addresses|applies|refers|lacks|can|cannot|could|won't|isn't|doesn't|helps|reduces|increases|provides|requires|uses|adds|moves|gives|leaves|works|checks|protects|covers|measures|tests|targets|handles|focuses|violates|skips|delays|treats|assumes|breaks|keeps|removes|creates|makes|sends)\b|[:,;]| —| –| -)`))
		b = append(b, regexp.MustCompile(`(?:^|[.!?]\s+)(?:[Oo]ption )?`+string(l)+`\)? is (?:the )?correct\b`))
	}
	return a, b
}()

func firstWords(s string, n int) string {
	ws := strings.Fields(s)
	if len(ws) > n {
		ws = ws[:n]
	}
	return strings.Join(ws, " ")
}

func lintCertification(c *Content, cert certbank.Certification, idx []int, add func(rule string, s Source, format string, args ...any)) {
	n := len(idx)
	keys := map[certbank.Letter]int{}
	longest := 0
	run, prev := 0, certbank.Letter("")
	for _, i := range idx {
		q := &c.Questions[i]
		keys[q.Answer]++
		if q.Answer == prev {
			run++
		} else {
			run, prev = 1, q.Answer
		}
		if run == 4 {
			add("key-run", c.Sources[i], "four questions in a row have answer %s; reorder or rekey to break the run", q.Answer)
		}
		if keyIsLongest(q) {
			longest++
		}
	}
	if share := float64(longest) / float64(n); share > maxKeyLongestShare {
		add("key-longest", Source{}, "the answer is the longest option in %d of %d questions (%.0f%%); keep it under %.0f%% by lengthening distractors", longest, n, share*100, maxKeyLongestShare*100)
	}
	lo, hi := minLetterShare, maxLetterShare
	if n >= balancedBankSize {
		lo, hi = minLetterShareLarge, maxLetterShareLarge
	}
	for _, l := range certbank.Letters {
		if share := float64(keys[l]) / float64(n); share < lo || share > hi {
			add("answer-balance", Source{}, "answer %s is the key of %d of %d questions (%.0f%%); each letter should be %.0f–%.0f%% for a certification of %s questions", l, keys[l], n, share*100, lo*100, hi*100, sizeClass(n))
		}
	}
	nearDuplicateTests(c, idx, add)
	lintClang(c, idx, add)
}

func sizeClass(n int) string {
	if n >= balancedBankSize {
		return fmt.Sprintf("%d or more", balancedBankSize)
	}
	return fmt.Sprintf("fewer than %d", balancedBankSize)
}

func keyIsLongest(q *certbank.Question) bool {
	k := q.Answer.Index()
	if k < 0 {
		return false
	}
	kl := len(q.Options[k])
	for i, o := range q.Options {
		if i != k && len(o) >= kl {
			return false
		}
	}
	return true
}

// sameOption reports whether two options are (nearly) the same: equal once
// case and spacing are ignored, or, for options of three words or more,
// sharing at least 90 % of their word trigrams. Short options such as cron
// expressions or commands differ in their symbols, so only equality counts.
func sameOption(a, b string) bool {
	x, y := newOptionText(a), newOptionText(b)
	return x.same(&y)
}

// optionText is what sameOption compares of an option, computed once.
type optionText struct {
	norm  string          // lower case, spacing folded
	words int             // how many words
	sh    map[string]bool // word trigrams
}

func newOptionText(o string) optionText {
	ws := words(o)
	return optionText{norm: strings.Join(strings.Fields(strings.ToLower(o)), " "), words: len(ws), sh: shinglesOf(ws)}
}

func (x *optionText) same(y *optionText) bool {
	if x.norm == y.norm {
		return true
	}
	if x.words < 3 || y.words < 3 {
		return false
	}
	return jaccard(x.sh, y.sh) >= 0.9
}

// similarity is the Jaccard index of the word-trigram (shingle) sets of a
// and b, or of their word sets for short texts.
func similarity(a, b string) float64 {
	return jaccard(shingles(a), shingles(b))
}

func jaccard(sa, sb map[string]bool) float64 {
	if len(sa) == 0 && len(sb) == 0 {
		return 1
	}
	inter := 0
	for s := range sa {
		if sb[s] {
			inter++
		}
	}
	return float64(inter) / float64(len(sa)+len(sb)-inter)
}

// words returns the lower-cased words of s: its runs of letters and digits
// (what the expression [\p{L}\p{N}]+ matches, without its cost).
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), notWordRune)
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }

// vendorName returns the first real vendor or product name in t that
// vendorRE would find, or "". Most texts name none, so a cheap word check
// comes first and the expression runs only on a hit.
func vendorName(t string) string {
	for _, w := range words(t) {
		if vendorWords[w] {
			return vendorRE.FindString(t)
		}
	}
	return ""
}

// vendorWords are the first words of vendorRE's alternatives.
var vendorWords = func() map[string]bool {
	m := map[string]bool{}
	for _, alt := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(vendorRE.String(), `(?i)\b(`), `)\b`), "|") {
		m[strings.Fields(alt)[0]] = true
	}
	return m
}()

func shingles(s string) map[string]bool { return shinglesOf(words(s)) }

func shinglesOf(ws []string) map[string]bool {
	out := map[string]bool{}
	if len(ws) < 3 {
		for _, w := range ws {
			out[w] = true
		}
		return out
	}
	for i := 0; i+3 <= len(ws); i++ {
		out[ws[i]+" "+ws[i+1]+" "+ws[i+2]] = true
	}
	return out
}

// nearDuplicates finds pairs of questions whose stems (with their answers)
// are nearly the same, across the whole bank. Candidate pairs come from an
// inverted index of rare shingles, so it stays fast on large banks.
func nearDuplicates(c *Content) []Finding {
	type doc struct {
		sh map[string]bool
	}
	docs := make([]doc, len(c.Questions))
	index := map[string][]int{}
	for i := range c.Questions {
		q := &c.Questions[i]
		docs[i].sh = shingles(q.Stem + " " + q.Options.Get(q.Answer))
		for s := range docs[i].sh {
			index[s] = append(index[s], i)
		}
	}
	var fs []Finding
	seen := map[[2]int]bool{}
	for i := range c.Questions {
		counts := map[int]int{}
		for s := range docs[i].sh {
			post := index[s]
			if len(post) > 50 { // too common to identify a question
				continue
			}
			for _, j := range post {
				if j > i {
					counts[j]++
				}
			}
		}
		for j, shared := range counts {
			if seen[[2]int{i, j}] {
				continue
			}
			union := len(docs[i].sh) + len(docs[j].sh) - shared
			if union > 0 && float64(shared)/float64(union) >= nearDuplicateThreshold {
				seen[[2]int{i, j}] = true
				fs = append(fs, Finding{"duplicate-question", Problem{c.Sources[j].File, c.Sources[j].Line,
					fmt.Sprintf("question %s nearly repeats %s (%s:%d); rewrite one or remove it", c.Questions[j].ID, c.Questions[i].ID, c.Sources[i].File, c.Sources[i].Line)}})
			}
		}
	}
	return fs
}
