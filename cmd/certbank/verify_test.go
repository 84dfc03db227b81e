package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// verifyFixture is the verify package's content tree: two certifications,
// seven questions, one human answer.
const verifyFixture = "../../verify/testdata/content"

// verifyContent copies the verify fixture into a temp dir.
func verifyContent(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "content")
	if err := os.CopyFS(dir, os.DirFS(verifyFixture)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// files lists the names in dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// fill writes letter after every "<id>: " line of a text sheet's block that
// keys names, and returns the filled sheet.
func fill(t *testing.T, path string, answers map[string]string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for id, l := range answers {
		text = strings.Replace(text, "\n"+id+": \n", "\n"+id+": "+l+"\n", 1)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

var scrumKeys = map[string]string{
	"ae111080-0172-4707-bd03-d5b48e78d230": "C",
	"fb4865ca-2bad-4f81-8db3-ad057cd8ed31": "C",
	"07493def-2ce7-46c9-a2c3-3c5ede61f64e": "D",
	"a9a1fd3c-32d4-4524-90e9-9c508589cc54": "C",
	"5b83f855-9734-4e90-9e09-e7c73b60e715": "C",
}

func TestVerifySheetBatches(t *testing.T) {
	content := verifyContent(t)
	dir := filepath.Join(t.TempDir(), "sheets")

	r := cli(t, nil, "verify", "sheet", "--content", content, "--certification", "scrum-psm1", "--dir", dir, "--batch", "2")
	if r.code != exitOK || !strings.Contains(r.stdout, "scrum-psm1: 5 questions in 3 sheets, scrum-psm1-01.txt ... scrum-psm1-03.txt") {
		t.Fatalf("sheet --dir --batch 2: %+v", r)
	}
	if got := files(t, dir); !slices.Equal(got, []string{"scrum-psm1-01.txt", "scrum-psm1-02.txt", "scrum-psm1-03.txt"}) {
		t.Errorf("files = %v", got)
	}
	last, _ := os.ReadFile(filepath.Join(dir, "scrum-psm1-03.txt"))
	if !strings.Contains(string(last), "Batch: 3 of 3 (1 question)") || !strings.HasSuffix(string(last), "\nANSWERS\nfb4865ca-2bad-4f81-8db3-ad057cd8ed31: \n") {
		t.Errorf("scrum-psm1-03.txt:\n%s", last)
	}

	// Existing sheets are not overwritten without --force, and nothing is
	// written then.
	os.WriteFile(filepath.Join(dir, "scrum-psm1-02.txt"), []byte("answers"), 0o644)
	r = cli(t, nil, "verify", "sheet", "--content", content, "--certification", "scrum-psm1", "--dir", dir)
	if r.code != exitUsage || !strings.Contains(r.stderr, "scrum-psm1-01.txt") || !strings.Contains(r.stderr, "--force") {
		t.Errorf("second export: %+v", r)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "scrum-psm1-02.txt")); string(got) != "answers" {
		t.Errorf("a refused export overwrote a sheet")
	}
	r = cli(t, nil, "verify", "sheet", "--content", content, "--certification", "scrum-psm1", "--dir", dir, "--force")
	if r.code != exitOK || !strings.Contains(r.stdout, "scrum-psm1: 5 questions in scrum-psm1-01.txt") {
		t.Errorf("--force: %+v", r)
	}

	// --all: one batch each; JSON batches on request; --solver is
	// --unanswered-by.
	all := filepath.Join(t.TempDir(), "all")
	r = cli(t, nil, "verify", "sheet", "--content", content, "--all", "--dir", all, "--format", "json", "--solver", "human expert (certified Scrum Master)")
	if r.code != exitOK || !strings.Contains(r.stdout, "scrum-psm1: 4 questions") || !strings.Contains(r.stdout, "wrote 2 sheet(s) with 6 questions") {
		t.Errorf("--all --format json --solver: %+v", r)
	}
	if got := files(t, all); !slices.Equal(got, []string{"cissp-01.json", "scrum-psm1-01.json"}) {
		t.Errorf("files = %v", got)
	}

	// Nothing disagreeing yet: no sheet.
	third := filepath.Join(t.TempDir(), "third")
	r = cli(t, nil, "verify", "sheet", "--content", content, "--all", "--dir", third, "--disagreeing")
	if r.code != exitOK || !strings.Contains(r.stdout, "no questions to answer with an unresolved disagreement; no sheet written") {
		t.Errorf("--disagreeing: %+v", r)
	}
	if _, err := os.Stat(third); err == nil {
		t.Errorf("--disagreeing with nothing to answer created %s", third)
	}

	// One sheet to stdout stays JSON.
	r = cli(t, nil, "verify", "sheet", "--content", content, "--certification", "cissp")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "{\n  \"certification\": \"cissp\"") {
		t.Errorf("stdout sheet: %+v", r)
	}
}

func TestVerifySheetUsage(t *testing.T) {
	content := verifyContent(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--certification", "cissp", "--batch", "10"}, "--batch splits the sheets written into --dir"},
		{[]string{"--certification", "cissp", "--dir", dir, "--batch", "0"}, "--batch must be at least 1"},
		{[]string{"--certification", "cissp", "--dir", dir, "--out", "x.txt"}, "give one of them"},
		{[]string{"--all"}, "give --dir"},
		{[]string{"--certification", "cissp", "--solver", "a", "--unanswered-by", "b"}, "--solver is another name for --unanswered-by"},
		{[]string{"--certification", "cissp", "--format", "yaml"}, "not text, json or csv"},
		{[]string{"--certification", "pmp", "--dir", dir}, `no certification "pmp"`},
	} {
		r := cli(t, nil, append([]string{"verify", "sheet", "--content", content}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q\n%s", tc.args, r.code, exitUsage, tc.want, r.stderr)
		}
	}
}

func TestVerifyImportText(t *testing.T) {
	content := verifyContent(t)
	dir := t.TempDir()
	if r := cli(t, nil, "verify", "sheet", "--content", content, "--certification", "scrum-psm1", "--dir", dir); r.code != exitOK {
		t.Fatalf("sheet: %+v", r)
	}
	sheet := filepath.Join(dir, "scrum-psm1-01.txt")

	// One answer missing: exit 3, file:line and the id, nothing written.
	partial := map[string]string{}
	for id, l := range scrumKeys {
		partial[id] = l
	}
	delete(partial, "07493def-2ce7-46c9-a2c3-3c5ede61f64e")
	bad := fill(t, sheet, partial)
	before, _ := os.ReadFile(filepath.Join(content, "certifications/scrum-psm1/questions/01-framework.yaml"))
	r := cli(t, nil, "verify", "import", "--content", content, "--solver", "alice", bad)
	if r.code != exitContent || !regexp.MustCompile(`scrum-psm1-01\.txt:\d+: question 07493def-2ce7-46c9-a2c3-3c5ede61f64e has no answer; write A, B, C or D`).MatchString(r.stderr) ||
		!strings.Contains(r.stderr, "nothing was written") {
		t.Errorf("import with an empty answer: %+v", r)
	}
	if after, _ := os.ReadFile(filepath.Join(content, "certifications/scrum-psm1/questions/01-framework.yaml")); string(after) != string(before) {
		t.Errorf("a refused import changed the content")
	}

	good := fill(t, sheet, scrumKeys)
	r = cli(t, nil, "verify", "import", "--content", content, "--solver", "alice", "--date", "2026-11-21", good)
	if r.code != exitOK || !strings.Contains(r.stdout, `recorded 5 answers of "alice" (5 agree with the stored answer, 0 disagree)`) {
		t.Errorf("import: %+v", r)
	}
}

// addQuestions appends n generated cissp questions (key B) to the content
// and returns their ids.
func addQuestions(t *testing.T, content string, n int) []string {
	t.Helper()
	var b strings.Builder
	b.WriteString("questions:\n")
	var ids []string
	for i := range n {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i+1, i+1)
		ids = append(ids, id)
		fmt.Fprintf(&b, `  - id: %s
    domain: "Asset Security"
    difficulty: medium
    objective: "2.1"
    tests: "Generated question %d"
    question: "Generated question %d: which role keeps the backups as the owner directs?"
    options:
      A: "Data owner"
      B: "Data custodian"
      C: "Data subject"
      D: "Data controller"
    answer: B
    explanation: "B is correct: the custodian protects data as the owner directs. A is wrong because the owner sets the requirements. C is wrong because subjects are described by data. D is wrong because controllers set purposes."
`, id, i, i)
	}
	if err := os.WriteFile(filepath.Join(content, "certifications/cissp/questions/99-generated.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return ids
}

// solverScript writes a cmd: solver that answers answers[id], else def.
func solverScript(t *testing.T, answers map[string]string, def string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("#!/bin/sh\nin=$(cat)\ncase \"$in\" in\n")
	for id, l := range answers {
		fmt.Fprintf(&b, "  *%s*) echo %s ;;\n", id, l)
	}
	fmt.Fprintf(&b, "  *) echo %s ;;\nesac\n", def)
	p := filepath.Join(t.TempDir(), "solver.sh")
	if err := os.WriteFile(p, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// wrongOn answers A on ids, else B.
func wrongOn(ids []string) map[string]string {
	m := map[string]string{}
	for _, id := range ids {
		m[id] = "A"
	}
	return m
}

func TestVerifyStatusRatesAndCalibration(t *testing.T) {
	content := verifyContent(t)
	ids := addQuestions(t, content, 23) // 25 cissp questions; the 2 fixture ones have keys B and D
	for _, s := range []struct {
		name  string
		wrong int
	}{{"good", 0}, {"fair", 2}, {"poor", 6}} {
		r := cli(t, nil, "verify", "run", "--content", content, "--certification", "cissp", "--solver", s.name+"=cmd:"+solverScript(t, wrongOn(ids[:s.wrong]), "B"))
		if r.code != exitOK {
			t.Fatalf("run %s: %+v", s.name, r)
		}
	}
	// good 24/25 (the fixture's D question), fair 22/25, poor 18/25: median
	// 88 %, poor 16 points below.
	r := cli(t, nil, "verify", "status", "--content", content, "--certification", "cissp")
	if r.code != exitOK ||
		!regexp.MustCompile(`(?m)^poor +25 +18 +72\.0 % +likely a bad solver, not bad questions$`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^fair +25 +22 +88\.0 %$`).MatchString(r.stdout) ||
		!strings.Contains(r.stdout, "median rate of the 3 solver(s) with at least 20 answers: 88.0 %") {
		t.Errorf("status:\n%s%s", r.stdout, r.stderr)
	}
	// Unrated questions do not fail --check (only pending and disagreeing
	// do), but fail --require-calibration.
	r = cli(t, nil, "verify", "status", "--content", content, "--certification", "cissp", "--check")
	if r.code != exitContent || strings.Contains(r.stderr, "unrated") {
		t.Errorf("--check: %+v", r)
	}
	for _, name := range []string{"alice", "bob"} {
		if r := cli(t, nil, "verify", "run", "--content", content, "--certification", "scrum-psm1", "--solver", name+"=cmd:"+solverScript(t, scrumKeys, "X")); r.code != exitOK {
			t.Fatalf("run %s: %+v", name, r)
		}
	}
	r = cli(t, nil, "verify", "status", "--content", content, "--certification", "scrum-psm1", "--check")
	if r.code != exitOK || !regexp.MustCompile(`(?m)^scrum-psm1 +5 +5 +0 +0 +5 +0$`).MatchString(r.stdout) {
		t.Errorf("--check with every question verified and none rated: %+v", r)
	}
	r = cli(t, nil, "verify", "status", "--content", content, "--certification", "scrum-psm1", "--require-calibration")
	if r.code != exitContent || !strings.Contains(r.stderr, "5 question(s) unrated and 0 miscalibrated") {
		t.Errorf("--require-calibration: %+v", r)
	}

	// Rate every scrum question; one rating contradicts its label.
	dir := t.TempDir()
	if r := cli(t, nil, "verify", "rate-sheet", "--content", content, "--certification", "scrum-psm1", "--dir", dir, "--batch", "3"); r.code != exitOK ||
		!strings.Contains(r.stdout, "scrum-psm1: 5 questions in 2 sheets, scrum-psm1-01.txt ... scrum-psm1-02.txt") {
		t.Fatalf("rate-sheet: %+v", r)
	}
	ratings := map[string]string{}
	for id := range scrumKeys {
		ratings[id] = "easy apply"
	}
	ratings["07493def-2ce7-46c9-a2c3-3c5ede61f64e"] = "hard analyse" // labelled easy
	sheets := []string{fill(t, filepath.Join(dir, "scrum-psm1-01.txt"), ratings), fill(t, filepath.Join(dir, "scrum-psm1-02.txt"), ratings)}
	r = cli(t, nil, append([]string{"verify", "rate-import", "--content", content, "--rater", "rita", "--date", "2026-11-20"}, sheets...)...)
	if r.code != exitOK || !strings.Contains(r.stdout, `recorded 5 ratings of "rita": 5 new`) ||
		!strings.Contains(r.stdout, "1 rating(s) contradict the question's label") || !strings.Contains(r.stdout, "07493def-2ce7-46c9-a2c3-3c5ede61f64e") {
		t.Errorf("rate-import: %+v", r)
	}
	r = cli(t, nil, "verify", "status", "--content", content, "--certification", "scrum-psm1", "--require-calibration")
	if r.code != exitContent || !strings.Contains(r.stderr, "0 question(s) unrated and 1 miscalibrated") ||
		!regexp.MustCompile(`01-framework\.yaml:\d+: 07493def-2ce7-46c9-a2c3-3c5ede61f64e: labelled easy; "rita" rated it hard analyse`).MatchString(r.stdout) {
		t.Errorf("status after rating: %+v", r)
	}
	// Lint reads the same ratings back and fails on the same question.
	if r := cli(t, nil, "lint", "--strict", "--content", content); !strings.Contains(r.stdout+r.stderr, "[calibration]") {
		t.Errorf("lint --strict does not report the miscalibration:\n%s%s", r.stdout, r.stderr)
	}
	// Now every question is rated: an unrated-by sheet is empty.
	if r := cli(t, nil, "verify", "rate-sheet", "--content", content, "--certification", "scrum-psm1", "--dir", t.TempDir(), "--unrated-by", "rita"); r.code != exitOK ||
		!strings.Contains(r.stdout, `no questions to rate unrated by "rita"; no sheet written`) {
		t.Errorf("rate-sheet --unrated-by: %+v", r)
	}
}

func TestVerifyRateUsage(t *testing.T) {
	content := verifyContent(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rate-sheet", "--certification", "cissp"}, "give --dir DIR"},
		{[]string{"rate-sheet", "--dir", t.TempDir()}, "give --certification SLUG or --all"},
		{[]string{"rate-sheet", "--certification", "cissp", "--dir", t.TempDir(), "--batch", "-1"}, "--batch must be at least 1"},
		{[]string{"rate-import", "x.txt"}, "--rater NAME is required"},
		{[]string{"rate-import", "--rater", "rita"}, "requires at least 1 arg"},
	} {
		r := cli(t, nil, append([]string{"verify", tc.args[0], "--content", content}, tc.args[1:]...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q\n%s", tc.args, r.code, exitUsage, tc.want, r.stderr)
		}
	}
}
