package main

import (
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
	if !strings.Contains(string(last), "Batch: 3 of 3 (1 question)") || !strings.HasSuffix(string(last), "\nANSWERS\n5b83f855-9734-4e90-9e09-e7c73b60e715: \n") {
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
