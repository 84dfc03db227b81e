package verify_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
	"github.com/certbank/certbank/verify"
)

// The fixture's questions and their keys.
const (
	sprintLength = "ae111080-0172-4707-bd03-d5b48e78d230" // scrum-psm1 01-framework.yaml, C
	sizing       = "fb4865ca-2bad-4f81-8db3-ad057cd8ed31" // scrum-psm1 01-framework.yaml, C; one human entry
	twoDevs      = "07493def-2ce7-46c9-a2c3-3c5ede61f64e" // scrum-psm1 01-framework.yaml, D
	whoDecides   = "a9a1fd3c-32d4-4524-90e9-9c508589cc54" // scrum-psm1 02-people.yaml, C
	testingDept  = "5b83f855-9734-4e90-9e09-e7c73b60e715" // scrum-psm1 02-people.yaml, C
	custodian    = "7d052cca-069e-4650-8c1f-7277bb4f75cf" // cissp 01-assets.yaml, B (no final newline)
	ssd          = "e2e9ac6b-34bc-42ae-9d7e-664081a97d73" // cissp 01-assets.yaml, D

	humanExpert = "human expert (certified Scrum Master)"
	date        = "2026-11-21"
)

var keys = map[string]certbank.Letter{
	sprintLength: "C", sizing: "C", twoDevs: "D", whoDecides: "C", testingDept: "C", custodian: "B", ssd: "D",
}

var scrumIDs = []string{sprintLength, sizing, twoDevs, whoDecides, testingDept}

// fixture copies testdata/content to a temporary directory and returns it.
func fixture(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "content")
	if err := os.CopyFS(dir, os.DirFS("testdata/content")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// snapshot returns the bytes of every file under dir, by relative path.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func mustOpen(t *testing.T, dir string) *verify.Bank {
	t.Helper()
	b, err := verify.Open(dir)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	return b
}

// question returns the question with the given id from a fresh load.
func question(t *testing.T, dir, id string) certbank.Question {
	t.Helper()
	for _, q := range mustOpen(t, dir).Content().Questions {
		if q.ID == id {
			return q
		}
	}
	t.Fatalf("no question %s", id)
	return certbank.Question{}
}

// inserted checks that every line of before appears in after, in order,
// and returns the lines of after that were inserted.
func inserted(t *testing.T, before, after string) []string {
	t.Helper()
	old, now := strings.SplitAfter(before, "\n"), strings.SplitAfter(after, "\n")
	var extra []string
	i := 0
	for _, l := range now {
		if i < len(old) && (l == old[i] || i == len(old)-1 && l == old[i]+"\n") {
			i++
			continue
		}
		extra = append(extra, strings.TrimRight(l, "\r\n"))
	}
	if i != len(old) {
		t.Fatalf("line %d of the original (%q) is missing after the edit:\n%s", i+1, old[i], after)
	}
	return extra
}

// writeSheet exports the sheet of slug in format f, fills in the answers
// (id → letter; ids not in answers keep their empty answer) and writes it
// to a file outside the content tree.
func writeSheet(t *testing.T, dir, slug string, f verify.Format, answers map[string]string) string {
	t.Helper()
	s, err := mustOpen(t, dir).Sheet(slug, verify.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Questions {
		s.Questions[i].Answer = answers[s.Questions[i].ID]
	}
	var buf bytes.Buffer
	if err := s.Write(&buf, f); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), slug+"."+string(f))
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// correct returns every question's key as a sheet answer, with overrides.
func correct(over map[string]string) map[string]string {
	a := map[string]string{}
	for id, k := range keys {
		a[id] = string(k)
	}
	for id, l := range over {
		a[id] = l
	}
	return a
}

func TestSheet(t *testing.T) {
	t.Parallel()
	dir := fixture(t)
	b := mustOpen(t, dir)
	for _, tc := range []struct {
		slug string
		f    verify.Format
		ids  []string
	}{
		{"scrum-psm1", verify.JSON, scrumIDs},
		{"scrum-psm1", verify.CSV, scrumIDs},
		{"scrum-psm1", verify.Text, scrumIDs},
		{"cissp", verify.JSON, []string{custodian, ssd}},
		{"cissp", verify.CSV, []string{custodian, ssd}},
		{"cissp", verify.Text, []string{custodian, ssd}},
	} {
		// A sheet lists its questions by id, never in file order.
		tc.ids = slices.Sorted(slices.Values(tc.ids))
		t.Run(tc.slug+"/"+string(tc.f), func(t *testing.T) {
			s, err := b.Sheet(tc.slug, verify.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := s.Write(&buf, tc.f); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			for _, leak := range []string{"EXPLAIN-", "explanation", "domain", "difficulty", "Scrum Framework", "Asset Security", "medium", "easy", "references", "objective", "tests", "Key:", "2.1"} {
				if strings.Contains(out, leak) {
					t.Errorf("the sheet contains %q:\n%s", leak, out)
				}
			}

			got, err := verify.ReadSheet("sheet", buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range got.Questions {
				ids = append(ids, r.ID)
				if r.Answer != "" {
					t.Errorf("question %s: the blank sheet has answer %q (key %s)", r.ID, r.Answer, keys[r.ID])
				}
				if r.Question != strings.Join(strings.Fields(r.Question), " ") || r.Question == "" {
					t.Errorf("question %s: text %q is not whitespace-normalised", r.ID, r.Question)
				}
				if r.Options.A == "" || r.Options.D == "" {
					t.Errorf("question %s: options missing: %+v", r.ID, r.Options)
				}
			}
			if !slices.Equal(ids, tc.ids) {
				t.Errorf("ids = %v, want %v", ids, tc.ids)
			}

			switch tc.f {
			case verify.CSV:
				if first, _, _ := strings.Cut(out, "\n"); first != "id,question,A,B,C,D,answer" {
					t.Errorf("CSV header = %q", first)
				}
				return
			case verify.Text:
				// The header says how to answer; the sheet ends with one
				// "<id>: " line per question, in sheet order.
				for _, want := range []string{"CERTBANK ANSWER SHEET\nCertification: " + tc.slug + "\n", "How to answer", "ANSWERS block", "certbank verify import --solver"} {
					if !strings.Contains(out, want) {
						t.Errorf("the text sheet lacks %q:\n%s", want, out)
					}
				}
				var block []string
				for _, id := range tc.ids {
					block = append(block, id+": ")
				}
				if want := "\n\nANSWERS\n" + strings.Join(block, "\n") + "\n"; !strings.HasSuffix(out, want) {
					t.Errorf("the text sheet does not end with\n%s\n%s", want, out)
				}
				for i, id := range tc.ids {
					if head := fmt.Sprintf("\nQuestion %d of %d (id %s)\n", i+1, len(tc.ids), id); !strings.Contains(out, head) {
						t.Errorf("no line %q", strings.TrimSpace(head))
					}
				}
				for _, l := range strings.Split(out, "\n") {
					if len(l) > 88 {
						t.Errorf("line longer than 88 characters: %q", l)
					}
				}
				return
			}
			// The JSON has exactly the documented shape.
			var raw struct {
				Certification string                       `json:"certification"`
				Instructions  string                       `json:"instructions"`
				Questions     []map[string]json.RawMessage `json:"questions"`
			}
			dec := json.NewDecoder(strings.NewReader(out))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&raw); err != nil {
				t.Fatalf("sheet JSON: %v\n%s", err, out)
			}
			if raw.Certification != tc.slug || raw.Instructions == "" {
				t.Errorf("certification %q, instructions %q", raw.Certification, raw.Instructions)
			}
			for _, q := range raw.Questions {
				keys := slices.Sorted(func(yield func(string) bool) {
					for k := range q {
						if !yield(k) {
							return
						}
					}
				})
				if !slices.Equal(keys, []string{"answer", "id", "options", "question"}) {
					t.Errorf("question keys = %v", keys)
				}
				if string(q["answer"]) != `""` {
					t.Errorf("answer = %s", q["answer"])
				}
				var opts map[string]string
				json.Unmarshal(q["options"], &opts)
				if len(opts) != 4 || opts["A"] == "" || opts["B"] == "" || opts["C"] == "" || opts["D"] == "" {
					t.Errorf("options = %s", q["options"])
				}
			}
		})
	}
}

func TestSheetUnanswered(t *testing.T) {
	t.Parallel()
	b := mustOpen(t, fixture(t))
	s, err := b.Sheet("scrum-psm1", verify.Filter{UnansweredBy: humanExpert})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Questions {
		if r.ID == sizing {
			t.Errorf("the sheet for %q holds %s, which they answered already", humanExpert, sizing)
		}
	}
	if len(s.Questions) != len(scrumIDs)-1 {
		t.Errorf("%d questions, want %d", len(s.Questions), len(scrumIDs)-1)
	}
	if _, err := b.Sheet("pmp", verify.Filter{}); certbank.ErrorCode(err) != certbank.Invalid {
		t.Errorf("Sheet(pmp) error = %v, want an Invalid error", err)
	}
}

func TestImportRoundTrip(t *testing.T) {
	t.Parallel()
	for _, f := range []verify.Format{verify.JSON, verify.CSV, verify.Text} {
		t.Run(string(f), func(t *testing.T) {
			t.Parallel()
			dir := fixture(t)
			before := snapshot(t, dir)
			answers := correct(map[string]string{twoDevs: "B", sizing: "c"})
			var sheets []string
			for _, slug := range []string{"scrum-psm1", "cissp"} {
				sheets = append(sheets, writeSheet(t, dir, slug, f, answers))
			}
			n, err := mustOpen(t, dir).Import("alice", date, sheets...)
			if err != nil {
				t.Fatal(err)
			}
			if n.Answers != 7 || n.Added != 7 || n.Agree != 6 || n.Disagree != 1 || len(n.Files) != 3 {
				t.Errorf("counts = %+v", n)
			}

			after := snapshot(t, dir)
			entry := func(dash string, letter string) []string {
				in := dash + "  "
				return []string{dash + "- solver: alice", in + "answer: " + letter, in + "date: " + date}
			}
			want := map[string][]string{
				"certifications/scrum-psm1/questions/01-framework.yaml": slices.Concat(
					[]string{"    verification:"}, entry("      ", "C"),
					entry("      ", "C"), // appended to the human's list
					[]string{"    verification:"}, entry("      ", "B"),
				),
				"certifications/scrum-psm1/questions/02-people.yaml": slices.Concat(
					[]string{"  verification:"}, entry("    ", "C"),
					[]string{"  verification:"}, entry("    ", "C"),
				),
				"certifications/cissp/questions/01-assets.yaml": slices.Concat(
					[]string{"    verification:"}, entry("      ", "B"),
					[]string{"    verification:"}, entry("      ", "D"),
				),
			}
			for rel, old := range before {
				got := inserted(t, old, after[rel])
				if !slices.Equal(got, want[rel]) {
					t.Errorf("%s: inserted lines\n%s\nwant\n%s", rel, strings.Join(got, "\n"), strings.Join(want[rel], "\n"))
				}
			}
			if f := "certifications/cissp/questions/01-assets.yaml"; !strings.HasSuffix(before[f], "\n") && strings.HasSuffix(after[f], "\n") {
				t.Errorf("01-assets.yaml had no final line break and got one")
			}
			for _, c := range []string{"# Comments and blank lines in this file must survive every edit.", "# keep this comment", "    # A trailing comment inside the item.", "# End of the file."} {
				if !strings.Contains(after["certifications/scrum-psm1/questions/01-framework.yaml"], c+"\n") {
					t.Errorf("comment %q was lost", c)
				}
			}

			q := question(t, dir, sizing)
			if want := []certbank.Verification{{Solver: humanExpert, Answer: "C", Date: "2026-10-01"}, {Solver: "alice", Answer: "C", Date: date}}; !slices.Equal(q.Verifications, want) {
				t.Errorf("verifications of %s = %+v, want %+v", sizing, q.Verifications, want)
			}

			// Importing the same sheets again changes nothing.
			n, err = mustOpen(t, dir).Import("alice", date, sheets...)
			if err != nil {
				t.Fatal(err)
			}
			if n.Unchanged != 7 || n.Added+n.Replaced != 0 || len(n.Files) != 0 {
				t.Errorf("re-import counts = %+v", n)
			}
			if again := snapshot(t, dir); !mapsEqual(again, after) {
				t.Errorf("re-importing the same sheets changed files")
			}

			// A new answer replaces the solver's entry instead of adding one.
			fixed := writeSheet(t, dir, "scrum-psm1", f, correct(nil))
			if n, err = mustOpen(t, dir).Import("alice", "2026-11-22", fixed); err != nil {
				t.Fatal(err)
			}
			if n.Replaced != 5 || n.Added != 0 {
				t.Errorf("counts = %+v", n)
			}
			q = question(t, dir, twoDevs)
			if want := []certbank.Verification{{Solver: "alice", Answer: "D", Date: "2026-11-22"}}; !slices.Equal(q.Verifications, want) {
				t.Errorf("verifications of %s = %+v, want %+v", twoDevs, q.Verifications, want)
			}
			if got := inserted(t, before["certifications/scrum-psm1/questions/02-people.yaml"], snapshot(t, dir)["certifications/scrum-psm1/questions/02-people.yaml"]); len(got) != 8 {
				t.Errorf("after replacing, 02-people.yaml has %d inserted lines, want 8:\n%s", len(got), strings.Join(got, "\n"))
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			return false
		}
	}
	return true
}

func TestImportCRLF(t *testing.T) {
	t.Parallel()
	dir := fixture(t)
	p := filepath.Join(dir, "certifications/scrum-psm1/questions/01-framework.yaml")
	data, _ := os.ReadFile(p)
	crlf := strings.ReplaceAll(string(data), "\n", "\r\n")
	os.WriteFile(p, []byte(crlf), 0o644)

	sheet := writeSheet(t, dir, "scrum-psm1", verify.JSON, correct(nil))
	if _, err := mustOpen(t, dir).Import("alice", date, sheet); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if strings.Count(string(got), "\n") != strings.Count(string(got), "\r\n") {
		t.Errorf("the CRLF file got LF-only lines:\n%q", got)
	}
	if extra := inserted(t, crlf, string(got)); len(extra) != 11 {
		t.Errorf("inserted %d lines, want 11: %q", len(extra), extra)
	}
	if q := question(t, dir, twoDevs); len(q.Verifications) != 1 {
		t.Errorf("verifications = %+v", q.Verifications)
	}
}

func TestImportRefusals(t *testing.T) {
	t.Parallel()
	// Each case edits a correctly filled JSON sheet of scrum-psm1 (or
	// replaces it) and names what the refusal must say about which line.
	type sheet = map[string]any
	questions := func(s sheet) []any { return s["questions"].([]any) }
	row := func(s sheet, i int) map[string]any { return questions(s)[i].(map[string]any) }
	for _, tc := range []struct {
		name  string
		edit  func(s sheet)
		raw   string // replaces the sheet when set
		line  int    // the line the problem names; 0 to skip the check
		want  string
		valid bool // also import a valid cissp sheet in the same run
	}{
		{name: "unknown id", edit: func(s sheet) { row(s, 1)["id"] = "00000000-0000-4000-8000-000000000000" }, want: "unknown question id", line: 16},
		{name: "edited stem", edit: func(s sheet) { row(s, 0)["question"] = "How long is a Sprint?" }, want: "question text differs", line: 5},
		{name: "edited option", edit: func(s sheet) { row(s, 2)["options"].(map[string]any)["C"] = "Ask someone else" }, want: "option C differs", line: 27},
		{name: "empty answer", edit: func(s sheet) { row(s, 3)["answer"] = "" }, want: "has no answer", line: 38},
		{name: "invalid answer", edit: func(s sheet) { row(s, 4)["answer"] = "E" }, want: `answer "E" is not one of`, line: 49},
		{name: "two letters", edit: func(s sheet) { row(s, 4)["answer"] = "B or C" }, want: "is not one of", line: 49},
		{name: "duplicate id", edit: func(s sheet) { s["questions"] = append(questions(s), row(s, 0)) }, want: "appears again (first at", line: 60},
		{name: "other certification", edit: func(s sheet) { s["certification"] = "cissp" }, want: "belongs to scrum-psm1, not to the sheet's certification cissp", line: 5},
		{name: "with a valid sheet", edit: func(s sheet) { row(s, 0)["answer"] = "" }, want: "has no answer", line: 5, valid: true},
		{name: "not JSON", raw: "{\"questions\": [\n  {\"id\": oops}\n]}", want: "not valid JSON", line: 2},
		{name: "empty sheet", raw: `{"certification": "scrum-psm1", "questions": []}`, want: "holds no questions"},
		{name: "bad CSV header", raw: "id,stem,A,B,C,D,answer\n", want: "the header must be", line: 1},
		{name: "short CSV row", raw: "id,question,A,B,C,D,answer\nx,y,z\n", want: "wrong number of fields", line: 2},
		{name: "CSV unknown id", raw: "id,question,A,B,C,D,answer\nnope,q,a,b,c,d,A\n", want: "unknown question id", line: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := fixture(t)
			p := writeSheet(t, dir, "scrum-psm1", verify.JSON, correct(nil))
			if tc.raw != "" {
				os.WriteFile(p, []byte(tc.raw), 0o644)
			} else {
				data, _ := os.ReadFile(p)
				var s sheet
				if err := json.Unmarshal(data, &s); err != nil {
					t.Fatal(err)
				}
				tc.edit(s)
				data, _ = json.MarshalIndent(s, "", "  ")
				os.WriteFile(p, data, 0o644)
			}
			paths := []string{p}
			if tc.valid {
				paths = append([]string{writeSheet(t, dir, "cissp", verify.CSV, correct(nil))}, paths...)
			}
			before := snapshot(t, dir)

			_, err := mustOpen(t, dir).Import("alice", date, paths...)
			var probs generator.Problems
			if !errors.As(err, &probs) {
				t.Fatalf("Import error = %v, want generator.Problems", err)
			}
			found := false
			for _, pr := range probs {
				if pr.File == p && strings.Contains(pr.Msg, tc.want) && (tc.line == 0 || pr.Line == tc.line) {
					found = true
				}
			}
			if !found {
				t.Errorf("no problem at %s:%d containing %q in:\n%v", p, tc.line, tc.want, err)
			}
			if after := snapshot(t, dir); !mapsEqual(before, after) {
				t.Errorf("a refused import changed the content tree")
			}
		})
	}
}

func TestImportBadUsage(t *testing.T) {
	t.Parallel()
	dir := fixture(t)
	p := writeSheet(t, dir, "cissp", verify.JSON, correct(nil))
	for _, tc := range []struct{ solver, date string }{
		{"", date},
		{" alice", date},
		{"alice\nbob", date},
		{"alice", "21.11.2026"},
	} {
		if _, err := mustOpen(t, dir).Import(tc.solver, tc.date, p); certbank.ErrorCode(err) != certbank.Invalid {
			t.Errorf("Import(%q, %q) error = %v, want Invalid", tc.solver, tc.date, err)
		}
	}
}
