package verify_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
	"github.com/certbank/certbank/verify"
)

// ratingSheet writes slug's rating sheet, the ratings filled in (id →
// rating; others left empty), to a file and returns its path.
func ratingSheet(t *testing.T, dir, slug string, ratings map[string]string) string {
	t.Helper()
	s, err := mustOpen(t, dir).RatingSheet(slug, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Questions {
		s.Questions[i].Rating = ratings[s.Questions[i].ID]
	}
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), slug+"-rating.txt")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// rate records rater's ratings of questions of slug through a rating sheet
// that holds only those questions.
func rate(t *testing.T, dir, rater, slug string, ratings map[string]string) {
	t.Helper()
	p := ratingSheet(t, dir, slug, ratings)
	data, _ := os.ReadFile(p)
	// Drop the questions not rated from the sheet: their head line up to
	// the next one, and their RATINGS line.
	text := string(data)
	s, _ := mustOpen(t, dir).RatingSheet(slug, "")
	for _, r := range s.Questions {
		if _, ok := ratings[r.ID]; ok {
			continue
		}
		text = strings.Replace(text, "\n"+r.ID+": \n", "\n", 1)
		start := strings.Index(text, "(id "+r.ID+")")
		start = strings.LastIndex(text[:start], "\n") + 1
		end := strings.Index(text[start:], "  Key: ") + start
		end += strings.Index(text[end:], "\n") + 1
		text = text[:start] + text[end:]
	}
	os.WriteFile(p, []byte(text), 0o644)
	if _, err := mustOpen(t, dir).RateImport(rater, date, p); err != nil {
		t.Fatalf("rating %v:\n%v\n%s", ratings, err, text)
	}
}

func TestRatingSheet(t *testing.T) {
	t.Parallel()
	dir := fixture(t)
	s, err := mustOpen(t, dir).RatingSheet("cissp", "")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.Split(50)[0].Write(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"CERTBANK RATING SHEET\nCertification: cissp\nExam: Certified Information Systems Security Professional (CISSP), exam code CISSP\nBatch: 1 of 1 (2 questions)\n",
		"How to rate", "<easy|medium|hard> <recall|apply|analyse>", "certbank verify rate-import --rater",
		"Question 1 of 2 (id " + custodian + ")", "  D) Data controller\n  Key: B\n",
		"Question 2 of 2 (id " + ssd + ")", "  Key: D\n",
		"\nRATINGS\n" + custodian + ": \n" + ssd + ": \n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the rating sheet lacks %q:\n%s", want, out)
		}
	}
	// Below the header: no label, objective, explanation, verification or
	// calibration.
	items := out[strings.Index(out, "Question 1 of 2"):]
	for _, leak := range []string{"easy", "medium", "hard", "difficulty", "objective", "2.1", "EXPLAIN-", "verification", "calibration", "Asset Security"} {
		if strings.Contains(items, leak) {
			t.Errorf("the rating sheet's questions contain %q:\n%s", leak, items)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 88 {
			t.Errorf("line longer than 88 characters: %q", l)
		}
	}
	if _, err := mustOpen(t, dir).RatingSheet("pmp", ""); certbank.ErrorCode(err) != certbank.Invalid {
		t.Errorf("RatingSheet(pmp) error = %v, want Invalid", err)
	}
}

func TestParseRating(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in string
		d  certbank.Difficulty
		l  certbank.Level
	}{
		{"medium apply", certbank.Medium, certbank.Apply},
		{"  Hard   Analyse ", certbank.Hard, certbank.Analyse},
		{"analyze, hard", certbank.Hard, certbank.Analyse},
		{"easy/recall", certbank.Easy, certbank.Recall},
		{"medium", "", ""},
		{"apply", "", ""},
		{"hard hard", "", ""},
		{"easy recall apply", "", ""},
		{"tricky apply", "", ""},
		{"", "", ""},
	} {
		d, l, err := verify.ParseRating(tc.in)
		if d != tc.d || l != tc.l || (err != nil) != (tc.d == "") {
			t.Errorf("ParseRating(%q) = %q, %q, %v; want %q, %q", tc.in, d, l, err, tc.d, tc.l)
		}
	}
}

func TestRateImportRoundTrip(t *testing.T) {
	t.Parallel()
	dir := fixture(t)
	before := snapshot(t, dir)
	ratings := map[string]string{sprintLength: "easy recall", sizing: "Medium Apply", twoDevs: "hard analyse", whoDecides: "medium apply", testingDept: "easy apply"}
	p := ratingSheet(t, dir, "scrum-psm1", ratings)
	n, err := mustOpen(t, dir).RateImport("rita", date, p)
	if err != nil {
		t.Fatal(err)
	}
	// twoDevs is labelled easy and rated hard.
	if n.Ratings != 5 || n.Added != 5 || !slices.Equal(n.Miscalibrated, []string{twoDevs}) || len(n.Files) != 2 {
		t.Errorf("counts = %+v", n)
	}
	after := snapshot(t, dir)
	const framework = "certifications/scrum-psm1/questions/01-framework.yaml"
	cal := func(d, l string) []string {
		return []string{"    calibration:", "      - rater: rita", "        difficulty: " + d, "        level: " + l, "        date: " + date}
	}
	want := slices.Concat(cal("easy", "recall"), cal("medium", "apply"), cal("hard", "analyse"))
	if got := inserted(t, before[framework], after[framework]); !slices.Equal(got, want) {
		t.Errorf("inserted\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// sizing has a verification list: the calibration list follows it.
	if i, j := strings.Index(after[framework], "solver: human expert"), strings.Index(after[framework], "difficulty: medium\n        level: apply"); i < 0 || j < i {
		t.Errorf("the calibration list of %s is not after its verification list:\n%s", sizing, after[framework])
	}
	// The loader reads them back.
	q := question(t, dir, sizing)
	if w := []certbank.Calibration{{Rater: "rita", Difficulty: certbank.Medium, Level: certbank.Apply, Date: date}}; !slices.Equal(q.Calibrations, w) || len(q.Verifications) != 1 {
		t.Errorf("calibrations of %s = %+v, want %+v", sizing, q.Calibrations, w)
	}

	// Again: unchanged. Another rater: added. rita again with another
	// rating: replaced.
	if n, err = mustOpen(t, dir).RateImport("rita", date, p); err != nil || n.Unchanged != 5 || len(n.Files) != 0 {
		t.Errorf("re-import: %+v, %v", n, err)
	}
	if !mapsEqual(after, snapshot(t, dir)) {
		t.Errorf("re-importing the same ratings changed files")
	}
	if _, err = mustOpen(t, dir).RateImport("sam", date, p); err != nil {
		t.Fatal(err)
	}
	ratings[twoDevs] = "easy apply"
	if n, err = mustOpen(t, dir).RateImport("rita", "2026-11-22", ratingSheet(t, dir, "scrum-psm1", ratings)); err != nil || n.Replaced != 5 || len(n.Miscalibrated) != 0 {
		t.Errorf("new ratings: %+v, %v", n, err)
	}
	q = question(t, dir, twoDevs)
	if w := []certbank.Calibration{{Rater: "rita", Difficulty: certbank.Easy, Level: certbank.Apply, Date: "2026-11-22"}, {Rater: "sam", Difficulty: certbank.Hard, Level: certbank.Analyse, Date: date}}; !slices.Equal(q.Calibrations, w) {
		t.Errorf("calibrations of %s = %+v, want %+v", twoDevs, q.Calibrations, w)
	}

	// --unrated-by leaves out what the rater rated.
	if s, _ := mustOpen(t, dir).RatingSheet("scrum-psm1", "rita"); len(s.Questions) != 0 {
		t.Errorf("rita's unrated sheet holds %d questions", len(s.Questions))
	}
	if s, _ := mustOpen(t, dir).RatingSheet("cissp", "rita"); len(s.Questions) != 2 {
		t.Errorf("rita's unrated cissp sheet holds %d questions", len(s.Questions))
	}
}

func TestRateImportRefusals(t *testing.T) {
	t.Parallel()
	full := map[string]string{sprintLength: "easy recall", sizing: "easy apply", twoDevs: "medium apply", whoDecides: "medium apply", testingDept: "easy apply"}
	ratingLine := func(t *testing.T, s, id string) int { return lineOf(t, s, id+":", lineOf(t, s, "RATINGS", 1)) }
	head := func(t *testing.T, s, id string) int { return lineOf(t, s, "(id "+id+")", 1) }
	for _, tc := range []struct {
		name string
		edit func(s string) string
		line func(t *testing.T, s string) int
		want []string
	}{
		{
			name: "missing RATINGS line",
			edit: func(s string) string { return strings.Replace(s, whoDecides+": medium apply\n", "", 1) },
			line: func(t *testing.T, s string) int { return head(t, s, whoDecides) },
			want: []string{whoDecides, "has no line in RATINGS", "<easy|medium|hard> <recall|apply|analyse>"},
		},
		{
			name: "repeated id",
			edit: func(s string) string { return s + sizing + ": hard apply\n" },
			line: func(t *testing.T, s string) int { return strings.Count(s, "\n") },
			want: []string{sizing, "appears again in RATINGS"},
		},
		{
			name: "id of another sheet",
			edit: func(s string) string { return s + ssd + ": hard apply\n" },
			line: func(t *testing.T, s string) int { return ratingLine(t, s, ssd) },
			want: []string{ssd, "not among the questions of this sheet"},
		},
		{
			name: "empty rating",
			edit: func(s string) string { return strings.Replace(s, twoDevs+": medium apply", twoDevs+":", 1) },
			line: func(t *testing.T, s string) int { return ratingLine(t, s, twoDevs) },
			want: []string{twoDevs, "has no rating"},
		},
		{
			name: "level missing",
			edit: func(s string) string { return strings.Replace(s, twoDevs+": medium apply", twoDevs+": medium", 1) },
			line: func(t *testing.T, s string) int { return ratingLine(t, s, twoDevs) },
			want: []string{twoDevs, `"medium" is not <easy|medium|hard> <recall|apply|analyse>`},
		},
		{
			name: "unknown id",
			edit: func(s string) string {
				return strings.ReplaceAll(s, testingDept, "00000000-0000-4000-8000-000000000000")
			},
			line: func(t *testing.T, s string) int { return ratingLine(t, s, "00000000-0000-4000-8000-000000000000") },
			want: []string{"unknown question id", "certbank verify rate-sheet"},
		},
		{
			name: "changed key",
			edit: func(s string) string {
				i := strings.Index(s, "(id "+twoDevs+")")
				return s[:i] + strings.Replace(s[i:], "  Key: D", "  Key: B", 1)
			},
			line: func(t *testing.T, s string) int { return head(t, s, twoDevs) },
			want: []string{twoDevs, `shows the key "B", the bank has D`, "export a new sheet"},
		},
		{
			name: "an answer sheet",
			edit: func(s string) string { return strings.Replace(s, "\nRATINGS\n", "\nANSWERS\n", 1) },
			line: func(t *testing.T, s string) int { return lineOf(t, s, "ANSWERS", 1) },
			want: []string{"answer sheet", "certbank verify import"},
		},
		{
			name: "JSON",
			edit: func(string) string { return `{"certification": "scrum-psm1", "questions": []}` },
			want: []string{"no RATINGS block"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := fixture(t)
			p := ratingSheet(t, dir, "scrum-psm1", full)
			data, _ := os.ReadFile(p)
			text := tc.edit(string(data))
			os.WriteFile(p, []byte(text), 0o644)
			before := snapshot(t, dir)

			_, err := mustOpen(t, dir).RateImport("rita", date, p)
			var probs generator.Problems
			if !errors.As(err, &probs) {
				t.Fatalf("RateImport error = %v, want generator.Problems", err)
			}
			line := 0
			if tc.line != nil {
				line = tc.line(t, text)
			}
			found := false
			for _, pr := range probs {
				ok := pr.File == p && pr.Line == line
				for _, w := range tc.want {
					ok = ok && strings.Contains(pr.Msg, w)
				}
				found = found || ok
			}
			if !found {
				t.Errorf("no problem at %s:%d containing %q in:\n%v", p, line, tc.want, err)
			}
			if !mapsEqual(before, snapshot(t, dir)) {
				t.Errorf("a refused import changed the content tree")
			}
		})
	}
	dir := fixture(t)
	for _, rater := range []string{"", " rita", "rita\nsam"} {
		if _, err := mustOpen(t, dir).RateImport(rater, date, ratingSheet(t, dir, "cissp", nil)); certbank.ErrorCode(err) != certbank.Invalid {
			t.Errorf("RateImport(%q) error = %v, want Invalid", rater, err)
		}
	}
}
