package generator_test

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/certbank/certbank/generator"
)

// validTree is a small content tree that loads without problems. Line
// numbers in the tests below refer to these texts.
func validTree() fstest.MapFS {
	return fstest.MapFS{
		"site.yaml": {Data: []byte(`name: certbank
description: Test site.
base_url: https://certbank.example
contact: support@certbank.example
exam_currency_verified: 2026-11-20
pricing:
  x402:
    - questions: 10
      amount: 10000
  no_answer_discount_percent: 30
payment:
  network: base
  pay_to: "0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c"
tiers:
  - name: free
    title: Free
    requests_per_minute: 10
    requests_per_month: 100
    unique_questions: 50
    max_limit: 10
`)},
		"certifications/cissp/certification.yaml": {Data: []byte(`slug: cissp
name: CISSP
provider: SecBody
exam_status: current
exam_minutes: 180
exam_questions: 150
domains:
  - name: Security Operations
    weight: 60
    objectives: [{code: "7.1", name: Detect and investigate incidents}]
  - name: Asset Security
    weight: 40
    objectives: [{code: "2.1", name: Classify information and assets}]
`)},
		"certifications/cissp/questions/a.yaml": {Data: []byte(`questions:
  - id: 11111111-1111-4111-8111-111111111111
    domain: Security Operations
    difficulty: easy
    question: Which control detects an intrusion after it has happened?
    options:
      A: A firewall
      B: An intrusion detection system
      C: A padlock on the server room
      D: An acceptable use policy
    answer: B
    explanation: B is correct because an IDS detects. A, C and D prevent or deter instead.
    verification:
      - solver: solver-one
        answer: B
        date: 2026-11-01
    objective: "7.1"
    tests: Detective controls find intrusions after they happen
`)},
		"certifications/cissp/questions/b.yaml": {Data: []byte(`questions:
  - id: 22222222-2222-4222-8222-222222222222
    domain: Asset Security
    difficulty: medium
    question: Who decides the classification of a data set?
    options:
      A: The data owner
      B: The data custodian
      C: The auditor
      D: The end user
    answer: A
    explanation: A is correct because the owner is accountable. B, C and D are not accountable for it.
    objective: "2.1"
    tests: The data owner decides classification
`)},
		"certifications/vendorfour-security-plus/certification.yaml": {Data: []byte(`slug: vendorfour-security-plus
name: VendorFour Security+
provider: VendorFour
exam_status: retiring
retirement_date: 2027-06-11
successor: SY0-801
exam_note: "SY0-701 retires on 2027-06-11; its successor is SY0-801."
exam_minutes: 90
exam_questions: 90
domains:
  - name: General Security Concepts
    weight: 100
    objectives: [{code: "1.1", name: Compare and contrast security controls}]
`)},
	}
}

const (
	site  = "content/site.yaml"
	cissp = "content/certifications/cissp/certification.yaml"
	qa    = "content/certifications/cissp/questions/a.yaml"
	qb    = "content/certifications/cissp/questions/b.yaml"
	splus = "content/certifications/vendorfour-security-plus/certification.yaml"
)

// edit is one change to validTree.
type edit func(t *testing.T, fsys fstest.MapFS)

// replace replaces old by new in file (which must contain old).
func replace(file, old, new string) edit {
	return func(t *testing.T, fsys fstest.MapFS) {
		t.Helper()
		f := fsys[file]
		if f == nil || !strings.Contains(string(f.Data), old) {
			t.Fatalf("test bug: %s does not contain %q", file, old)
		}
		fsys[file] = &fstest.MapFile{Data: []byte(strings.Replace(string(f.Data), old, new, 1))}
	}
}

func put(file, data string) edit {
	return func(_ *testing.T, fsys fstest.MapFS) { fsys[file] = &fstest.MapFile{Data: []byte(data)} }
}

func remove(file string) edit {
	return func(t *testing.T, fsys fstest.MapFS) {
		t.Helper()
		if fsys[file] == nil {
			t.Fatalf("test bug: no %s", file)
		}
		delete(fsys, file)
	}
}

// in names a file of the tree as Load reports it.
func in(file string) string { return strings.TrimPrefix(file, "content/") }

// loadProblems applies edits to validTree, loads it and returns its
// problems as "file:line: message" lines.
func loadProblems(t *testing.T, edits ...edit) []string {
	t.Helper()
	fsys := validTree()
	for _, e := range edits {
		e(t, fsys)
	}
	c, err := generator.Load(fsys, "content")
	if c == nil {
		t.Fatal("Load returned no Content")
	}
	if err == nil {
		return nil
	}
	var ps generator.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Load returned %T (%v), want generator.Problems", err, err)
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// checkProblems compares the problems with want: the same count, and each
// problem starts with its want line (exact file:line and the start of the
// message).
func checkProblems(t *testing.T, got, want []string) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = strings.HasPrefix(got[i], want[i])
	}
	if !ok {
		t.Errorf("problems:\n  %s\nwant (prefixes):\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestLoadValidTree(t *testing.T) {
	checkProblems(t, loadProblems(t), nil)
	c, err := generator.Load(validTree(), "content")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Questions) != 2 || len(c.Sources) != 2 || len(c.Certifications) != 2 {
		t.Fatalf("loaded %d questions, %d sources, %d certifications; want 2, 2, 2", len(c.Questions), len(c.Sources), len(c.Certifications))
	}
	if c.Sources[1] != (generator.Source{File: qb, Line: 2}) {
		t.Errorf("second question at %+v, want %s:2", c.Sources[1], qb)
	}
	if c.Site.FreeSampleSize != 20 || c.Site.Quality.MinAgreeingSolvers != 2 || c.Site.FunctionsURL != c.Site.BaseURL {
		t.Errorf("defaults: free_sample_size %d, min_agreeing_solvers %d, functions_url %q; want 20, 2 and the base_url",
			c.Site.FreeSampleSize, c.Site.Quality.MinAgreeingSolvers, c.Site.FunctionsURL)
	}
}

// TestLoadProblems covers every problem the loader reports, with its exact
// file and line.
func TestLoadProblems(t *testing.T) {
	tests := []struct {
		name  string
		edits []edit
		want  []string
	}{
		// The tree.
		{"missing site.yaml", []edit{remove(in(site))},
			[]string{site + ": cannot read the site settings"}},
		{"no certifications directory", []edit{
			remove(in(cissp)), remove(in(qa)), remove(in(qb)), remove(in(splus))},
			[]string{"content/certifications: cannot read the certifications directory"}},
		{"unknown slug directory", []edit{put("certifications/not-a-cert/certification.yaml", "slug: not-a-cert\n")},
			[]string{`content/certifications/not-a-cert: unknown certification slug "not-a-cert"`}},
		{"file among the certification directories", []edit{put("certifications/README.md", "hi\n")},
			[]string{"content/certifications/README.md: unexpected file"}},
		{"missing certification.yaml", []edit{remove(in(cissp))},
			[]string{cissp + ": cannot read it"}},
		{"question file that is not YAML", []edit{put("certifications/cissp/questions/notes.txt", "todo\n")},
			[]string{"content/certifications/cissp/questions/notes.txt: unexpected entry"}},

		// YAML itself.
		{"bad YAML syntax", []edit{replace(in(qa), "question: Which control", "question: Which: control")},
			[]string{qa + ":5: not valid YAML: mapping values are not allowed"}},
		// yaml.v3 points a scanner error at the start of the scalar it was
		// reading: the option above the tab.
		{"tab indentation", []edit{replace(in(qa), "    answer: B", "\tanswer: B")},
			[]string{qa + ":10: not valid YAML: found a tab character that violates indentation"}},
		{"unclosed bracket", []edit{put("certifications/pmp/certification.yaml", "slug: pmp\nname: [broken\n")},
			[]string{"content/certifications/pmp/certification.yaml:2: not valid YAML: did not find expected ',' or ']'"}},
		// A parser error is reported at the start of the collection it
		// interrupts, or where the text ends.
		{"unclosed bracket at the end", []edit{put(in(qa), "questions: [\n")},
			[]string{qa + ":2: not valid YAML: did not find expected node content"}},
		{"key indented too little", []edit{replace(in(qa), "      B: An intrusion", "     B: An intrusion")},
			[]string{qa + ":2: not valid YAML: did not find expected key"}},
		{"flow mapping not closed", []edit{replace(in(qa), "      A: A firewall\n", "      A: {x: 1\n")},
			[]string{qa + ":7: not valid YAML: did not find expected ',' or '}'"}},
		{"empty question file", []edit{put(in(qa), "")},
			[]string{qa + ": the file is empty"}},
		{"question file is a list", []edit{put(in(qa), "- id: x\n")},
			[]string{qa + ":1: a question file must be a mapping"}},
		{"questions is not a list", []edit{put(in(qa), "questions: {}\n")},
			[]string{qa + `:1: "questions" in a question file must be a list`}},
		{"no questions key", []edit{put(in(qa), "items: []\n")},
			[]string{qa + `:1: a question file needs a "questions" list`, qa + `:1: unknown field "items" in a question file`}},

		// site.yaml.
		{"unknown field in site.yaml", []edit{replace(in(site), "contact:", "colour: blue\ncontact:")},
			[]string{site + `:4: unknown field "colour" in site.yaml`}},
		{"relative base_url", []edit{replace(in(site), "https://certbank.example", "certbank.example")},
			[]string{site + `:3: "base_url" must be an absolute http(s) URL`}},
		{"bad exam_currency_verified", []edit{replace(in(site), "2026-11-20", "20 Nov 2026")},
			[]string{site + `:5: "exam_currency_verified" in site.yaml must be a date`}},
		{"bad pay_to", []edit{replace(in(site), "0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c", "0x1234")},
			[]string{site + ":13: pay_to must be a 0x-prefixed 20-byte hex address"}},
		{"unsupported network", []edit{replace(in(site), "network: base", "network: ethereum")},
			[]string{site + `:12: payment network "ethereum" is not supported`}},
		{"discount over 100", []edit{replace(in(site), "no_answer_discount_percent: 30", "no_answer_discount_percent: 130")},
			[]string{site + ":10: no_answer_discount_percent must be between 0 and 100"}},
		{"price entry without amount", []edit{replace(in(site), "      amount: 10000\n", "")},
			[]string{site + `:8: a price entry (atomic USDC units: 10000 = 0.01 USDC) is missing "amount"`, site + ":8: a price entry needs questions and amount greater than 0"}},
		{"no free tier", []edit{replace(in(site), "name: free", "name: starter")},
			[]string{site + `:1: site.yaml must define a tier named "free"`}},
		{"tier limit not a number", []edit{replace(in(site), "requests_per_month: 100", "requests_per_month: lots")},
			[]string{site + `:18: "requests_per_month" in a tier must be a whole number of 0 or more, or unlimited`}},

		// certification.yaml.
		{"slug mismatch", []edit{replace(in(cissp), "slug: cissp", "slug: pmp")},
			[]string{cissp + `:1: slug "pmp" does not match its directory "cissp"`}},
		{"weights not summing to 100", []edit{replace(in(cissp), "weight: 60", "weight: 50")},
			[]string{cissp + ":8: domain weights add up to 90; they must add up to 100"}},
		{"domain listed twice", []edit{replace(in(cissp), "name: Asset Security", "name: Security Operations"),
			replace(in(qb), "domain: Asset Security", "domain: Security Operations")},
			[]string{cissp + `:11: domain "Security Operations" is listed twice`}},
		{"zero weight", []edit{replace(in(cissp), "weight: 60", "weight: 0"), replace(in(cissp), "weight: 40", "weight: 100")},
			[]string{cissp + ":9: domain weight must be at least 1 percent"}},
		{"no domains", []edit{replace(in(cissp), "domains:\n  - name: Security Operations\n    weight: 60\n    objectives: [{code: \"7.1\", name: Detect and investigate incidents}]\n  - name: Asset Security\n    weight: 40\n    objectives: [{code: \"2.1\", name: Classify information and assets}]\n", "")},
			[]string{cissp + `:1: certification.yaml is missing "domains"`}},
		{"bad exam_status", []edit{replace(in(cissp), "exam_status: current", "exam_status: retired")},
			[]string{cissp + `:4: exam_status "retired" must be current or retiring`}},
		{"retiring without date, successor and note", []edit{
			replace(in(splus), "retirement_date: 2027-06-11\nsuccessor: SY0-801\nexam_note: \"SY0-701 retires on 2027-06-11; its successor is SY0-801.\"\n", "")},
			[]string{
				splus + `:1: certification.yaml is missing "exam_note"`,
				splus + `:1: certification.yaml is missing "retirement_date"`,
				splus + `:1: certification.yaml is missing "successor"`,
			}},
		{"retirement date on a current exam", []edit{replace(in(cissp), "exam_status: current\n", "exam_status: current\nretirement_date: 2027-01-01\n")},
			[]string{cissp + `:5: "retirement_date" is only for exam_status: retiring`}},
		{"missing exam_minutes", []edit{replace(in(cissp), "exam_minutes: 180\n", "")},
			[]string{cissp + `:1: certification.yaml is missing "exam_minutes"`}},

		// Questions.
		{"duplicate id across files", []edit{replace(in(qb), "22222222-2222-4222-8222-222222222222", "11111111-1111-4111-8111-111111111111")},
			[]string{qb + ":2: duplicate id 11111111-1111-4111-8111-111111111111, already used at " + qa + ":2"}},
		{"duplicate id in one file", []edit{replace(in(qa), "    tests: Detective controls find intrusions after they happen\n", "    tests: Detective controls find intrusions after they happen\n"+
			"  - id: 11111111-1111-4111-8111-111111111111\n    domain: Security Operations\n    objective: \"7.1\"\n    tests: Failed sign-ins appear in the authentication log\n    difficulty: hard\n"+
			"    question: Which log shows failed sign-ins?\n    options: {A: a, B: b, C: c, D: d}\n    answer: A\n    explanation: A because.\n")},
			[]string{qa + ":19: duplicate id 11111111-1111-4111-8111-111111111111, already used at " + qa + ":2"}},
		{"duplicate id across certifications", []edit{
			put("certifications/vendorfour-security-plus/questions/q.yaml", strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(string(validTree()[in(qa)].Data),
				"domain: Security Operations", "domain: General Security Concepts"), "objective: \"7.1\"", "objective: \"1.1\""), "    verification:\n      - solver: solver-one\n        answer: B\n        date: 2026-11-01\n", ""))},
			[]string{"content/certifications/vendorfour-security-plus/questions/q.yaml:2: duplicate id 11111111-1111-4111-8111-111111111111, already used at " + qa + ":2"}},
		{"non-UUID id", []edit{replace(in(qa), "11111111-1111-4111-8111-111111111111", "q-1")},
			[]string{qa + `:2: id "q-1" is not a lowercase UUID`}},
		{"uppercase UUID", []edit{replace(in(qa), "11111111-1111-4111-8111-111111111111", "ABCDEF11-1111-4111-8111-111111111111")},
			[]string{qa + `:2: id "ABCDEF11-1111-4111-8111-111111111111" is not a lowercase UUID`}},
		{"missing id", []edit{replace(in(qa), "  - id: 11111111-1111-4111-8111-111111111111\n    domain:", "  - domain:")},
			[]string{qa + `:2: a question is missing "id"`}},
		{"missing option", []edit{replace(in(qa), "      D: An acceptable use policy\n", "")},
			[]string{qa + ":7: option D is missing; every question has exactly four options"}},
		{"fifth option", []edit{replace(in(qa), "      D: An acceptable use policy\n", "      D: An acceptable use policy\n      E: A guard dog\n")},
			[]string{qa + `:11: unknown field "E" in options`}},
		{"empty option", []edit{replace(in(qa), "C: A padlock on the server room", `C: ""`)},
			[]string{qa + `:9: "C" in options is empty`}},
		{"options not a mapping", []edit{replace(in(qa), "    options:\n      A: A firewall\n      B: An intrusion detection system\n      C: A padlock on the server room\n      D: An acceptable use policy\n", "    options: [a, b, c, d]\n")},
			[]string{qa + ":6: options must be a mapping of keys to values, not a list"}},
		{"missing options", []edit{replace(in(qa), "    options:\n      A: A firewall\n      B: An intrusion detection system\n      C: A padlock on the server room\n      D: An acceptable use policy\n", "")},
			[]string{qa + `:2: a question is missing "options"`}},
		{"answer not in A-D", []edit{replace(in(qa), "answer: B\n    explanation", "answer: E\n    explanation")},
			[]string{qa + `:11: answer "E" must be one of the option letters A, B, C, D`}},
		{"lowercase answer", []edit{replace(in(qa), "answer: B\n    explanation", "answer: b\n    explanation")},
			[]string{qa + `:11: answer "b" must be one of the option letters`}},
		{"domain not in the certification", []edit{replace(in(qa), "domain: Security Operations", "domain: Cryptography")},
			[]string{qa + `:3: domain "Cryptography" is not one of cissp's domains: "Security Operations", "Asset Security"`}},
		{"unknown field", []edit{replace(in(qa), "    verification:", "    hint: think about detection\n    verification:")},
			[]string{qa + `:13: unknown field "hint" in a question; allowed fields are: id, domain, objective, tests, difficulty, question, options, answer, explanation, references, verification, calibration`}},
		{"unknown objective", []edit{replace(in(qa), `objective: "7.1"`, `objective: "7.9"`)},
			[]string{qa + `:17: objective "7.9" is not an objective of cissp; a question of domain "Security Operations" names one of its objectives: 7.1`}},
		{"objective of another domain", []edit{replace(in(qa), `objective: "7.1"`, `objective: "2.1"`)},
			[]string{qa + `:17: objective "2.1" belongs to domain "Asset Security"; a question of domain "Security Operations" names one of its objectives: 7.1`}},
		{"missing objective", []edit{replace(in(qb), "    objective: \"2.1\"\n", "")},
			[]string{qb + `:2: a question is missing "objective"`}},
		{"missing tests", []edit{replace(in(qb), "    tests: The data owner decides classification\n", "")},
			[]string{qb + `:2: a question is missing "tests"`}},
		{"tests too short", []edit{replace(in(qb), "tests: The data owner decides classification", "tests: Owner")},
			[]string{qb + `:14: tests is 5 characters; write one line of 10 to 140 characters`}},
		{"domain without objectives", []edit{replace(in(cissp), "    objectives: [{code: \"2.1\", name: Classify information and assets}]\n", "")},
			[]string{cissp + `:11: domain "Asset Security" lists no objectives`, qb + `:13: objective "2.1" is not an objective of cissp`}},
		{"objective code twice", []edit{replace(in(cissp), `code: "2.1"`, `code: "7.1"`)},
			[]string{cissp + `:13: objective code "7.1" is used twice`, qb + `:13: objective "2.1" is not an objective of cissp`}},
		{"bad objective code", []edit{replace(in(cissp), `code: "2.1"`, `code: "2.1 Classify"`)},
			[]string{cissp + `:13: objective code "2.1 Classify" must look like`, qb + `:13: objective "2.1" is not an objective of cissp`}},
		{"bad calibration", []edit{replace(in(qb), "    objective:", "    calibration:\n      - rater: r1\n        difficulty: brutal\n        level: recall\n        date: 2026-11-25\n      - rater: r2\n        difficulty: easy\n        level: memorise\n        date: 2026-11-25\n    objective:")},
			[]string{qb + `:15: calibration difficulty "brutal" must be easy, medium or hard`, qb + `:20: calibration level "memorise" must be recall, apply or analyse`}},
		{"bad measurement", []edit{replace(in(qb), "    objective:", "    measured:\n      responses: 0\n      p: 1.4\n      difficulty: brutal\n      date: 2026-13-01\n    objective:")},
			[]string{qb + `:14: measured responses must be at least 1`, qb + `:15: measured p "1.4" must be a share from 0 to 1`, qb + `:16: measured difficulty "brutal" must be easy, medium or hard`, qb + `:17: "date" in measured must be a date`}},
		{"bad target_questions", []edit{replace(in(cissp), "exam_questions: 150\n", "exam_questions: 150\ntarget_questions: 0\n")},
			[]string{cissp + `:7: target_questions must be at least 1`}},
		{"field twice", []edit{replace(in(qa), "    difficulty: easy\n", "    difficulty: easy\n    difficulty: hard\n")},
			[]string{qa + `:5: field "difficulty" appears twice in a question`}},
		{"bad difficulty", []edit{replace(in(qa), "difficulty: easy", "difficulty: extreme")},
			[]string{qa + `:4: difficulty "extreme" must be easy, medium or hard`}},
		{"empty explanation", []edit{replace(in(qa), "explanation: B is correct because an IDS detects. A, C and D prevent or deter instead.", `explanation: ""`)},
			[]string{qa + `:12: "explanation" in a question is empty`}},
		{"blank explanation", []edit{replace(in(qa), "explanation: B is correct because an IDS detects. A, C and D prevent or deter instead.", `explanation: "   "`)},
			[]string{qa + `:12: "explanation" in a question is empty`}},
		{"missing explanation", []edit{replace(in(qa), "    explanation: B is correct because an IDS detects. A, C and D prevent or deter instead.\n", "")},
			[]string{qa + `:2: a question is missing "explanation"`}},
		{"null question", []edit{replace(in(qa), "question: Which control detects an intrusion after it has happened?", "question: ~")},
			[]string{qa + `:2: a question is missing "question"`}},
		{"question is a list", []edit{replace(in(qa), "question: Which control detects an intrusion after it has happened?", "question: [a, b]")},
			[]string{qa + `:5: "question" in a question must be text, not a list`}},
		{"empty reference", []edit{replace(in(qa), "    verification:", "    references:\n      - \"\"\n    verification:")},
			[]string{qa + `:14: each entry of "references" in a question must be non-empty text`}},
		{"verification answer not a letter", []edit{replace(in(qa), "        answer: B\n", "        answer: X\n")},
			[]string{qa + `:15: verification answer "X" must be one of A, B, C, D`}},
		{"verification without date", []edit{replace(in(qa), "        date: 2026-11-01\n", "")},
			[]string{qa + `:14: a verification entry is missing "date"`}},
		{"verification with a bad date", []edit{replace(in(qa), "date: 2026-11-01", "date: yesterday")},
			[]string{qa + `:16: "date" in a verification entry must be a date like 2026-11-21, not "yesterday"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkProblems(t, loadProblems(t, tt.edits...), tt.want)
		})
	}
}

// TestLoadReportsEveryProblemAtOnce breaks several files at once: every
// problem comes back from one Load, sorted by file and line.
func TestLoadReportsEveryProblemAtOnce(t *testing.T) {
	got := loadProblems(t,
		replace(in(site), "https://certbank.example", "certbank.example"),
		replace(in(cissp), "weight: 60", "weight: 50"),
		replace(in(splus), "successor: SY0-801\n", ""),
		replace(in(qa), "answer: B\n    explanation", "answer: E\n    explanation"),
		replace(in(qa), "difficulty: easy", "difficulty: extreme"),
		replace(in(qb), "22222222-2222-4222-8222-222222222222", "11111111-1111-4111-8111-111111111111"),
		replace(in(qb), "domain: Asset Security", "domain: Cryptography"),
		put("certifications/not-a-cert/certification.yaml", "slug: not-a-cert\n"),
		put("certifications/pmp/certification.yaml", "slug: pmp\nname: [broken\n"),
	)
	checkProblems(t, got, []string{
		cissp + ":8: domain weights add up to 90",
		qa + `:4: difficulty "extreme" must be easy, medium or hard`,
		qa + `:11: answer "E" must be one of the option letters`,
		qb + ":2: duplicate id 11111111-1111-4111-8111-111111111111, already used at " + qa + ":2",
		qb + `:3: domain "Cryptography" is not one of cissp's domains`,
		"content/certifications/not-a-cert: unknown certification slug",
		"content/certifications/pmp/certification.yaml:2: not valid YAML: did not find expected ',' or ']'",
		splus + `:1: certification.yaml is missing "successor"`,
		site + `:3: "base_url" must be an absolute http(s) URL`,
	})
}
