package verify_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/verify"
)

// keySolver answers every question with its key, except the given answers.
func keySolver(except map[string]certbank.Letter) verify.Solver {
	return verify.SolverFunc(func(_ context.Context, it verify.Item) (certbank.Letter, error) {
		if l, ok := except[it.ID]; ok {
			return l, nil
		}
		return keys[it.ID], nil
	})
}

// verifiedFixture has alice and bob answer every scrum-psm1 question in one
// run; alice picks B on twoDevs, whose key is D.
func verifiedFixture(t *testing.T) string {
	t.Helper()
	dir := fixture(t)
	_, err := mustOpen(t, dir).Run(context.Background(), verify.RunOptions{
		Solvers: []verify.NamedSolver{
			{Name: "alice", Solver: keySolver(map[string]certbank.Letter{twoDevs: "B"})},
			{Name: "bob", Solver: keySolver(nil)},
		},
		Certification: "scrum-psm1",
		Date:          date,
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestStatus(t *testing.T) {
	t.Parallel()
	fresh, verified := fixture(t), verifiedFixture(t)
	for _, tc := range []struct {
		name        string
		dir         string
		slug        string
		certs       []verify.CertStatus
		pending     []string
		disagreeing []string
	}{
		{
			name: "fresh", dir: fresh,
			certs: []verify.CertStatus{
				{Slug: "cissp", Questions: 2, Pending: 2, Unrated: 2},
				{Slug: "scrum-psm1", Questions: 5, Pending: 5, Unrated: 5},
			},
			pending: []string{custodian, ssd, sprintLength, sizing, twoDevs, whoDecides, testingDept},
		},
		{
			name: "two solvers", dir: verified,
			certs: []verify.CertStatus{
				{Slug: "cissp", Questions: 2, Pending: 2, Unrated: 2},
				{Slug: "scrum-psm1", Questions: 5, Verified: 4, Disagreeing: 1, Unrated: 5},
			},
			pending:     []string{custodian, ssd},
			disagreeing: []string{twoDevs},
		},
		{
			name: "one certification", dir: verified, slug: "scrum-psm1",
			certs:       []verify.CertStatus{{Slug: "scrum-psm1", Questions: 5, Verified: 4, Disagreeing: 1, Unrated: 5}},
			disagreeing: []string{twoDevs},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := mustOpen(t, tc.dir).Status(tc.slug)
			if err != nil {
				t.Fatal(err)
			}
			if st.MinAgreeing != 2 {
				t.Errorf("MinAgreeing = %d, want 2 (site.yaml)", st.MinAgreeing)
			}
			if !slices.Equal(st.Certifications, tc.certs) {
				t.Errorf("certifications = %+v, want %+v", st.Certifications, tc.certs)
			}
			ids := func(us []verify.Unverified) []string {
				var out []string
				for _, u := range us {
					out = append(out, u.ID)
				}
				return out
			}
			if got := ids(st.Pending); !slices.Equal(got, tc.pending) {
				t.Errorf("pending = %v, want %v", got, tc.pending)
			}
			if got := ids(st.Disagreeing); !slices.Equal(got, tc.disagreeing) {
				t.Errorf("disagreeing = %v, want %v", got, tc.disagreeing)
			}
		})
	}

	st, _ := mustOpen(t, verified).Status("")
	wantSolvers := []verify.SolverStats{{Name: "alice", Answers: 5, Agree: 4}, {Name: "bob", Answers: 5, Agree: 5}, {Name: humanExpert, Answers: 1, Agree: 1}}
	if !slices.Equal(st.Solvers, wantSolvers) || st.Judged != 0 {
		t.Errorf("solvers = %+v (judged %d), want %+v and none judged (fewer than %d answers each)", st.Solvers, st.Judged, wantSolvers, verify.RateMinAnswers)
	}
	d := st.Disagreeing[0]
	if !strings.HasSuffix(d.Source.File, "certifications/scrum-psm1/questions/01-framework.yaml") || d.Source.Line != 66 ||
		d.Answer != "D" || d.Agree != 1 || len(d.Disagree) != 1 || d.Disagree[0].Solver != "alice" || d.Disagree[0].Answer != "B" {
		t.Errorf("disagreement = %+v", d)
	}
	st, _ = mustOpen(t, fresh).Status("")
	if p := st.Pending[3]; p.ID != sizing || p.Agree != 1 {
		t.Errorf("pending %+v, want %s with the human's agreeing answer", p, sizing)
	}
	if _, err := mustOpen(t, fresh).Status("pmp"); certbank.ErrorCode(err) != certbank.Invalid {
		t.Errorf("Status(pmp) error = %v, want Invalid", err)
	}
}

func TestOverride(t *testing.T) {
	t.Parallel()
	dir := verifiedFixture(t)
	const file = "certifications/scrum-psm1/questions/01-framework.yaml"
	before := snapshot(t, dir)

	// Refusals change nothing.
	for _, tc := range []struct{ name, id, solver, reason, want string }{
		{"unknown id", "00000000-0000-4000-8000-000000000000", "alice", "r", "no question with id"},
		{"no such solver", twoDevs, "carol", "r", `no entry from solver "carol"; its solvers are "`},
		{"agreeing solver", twoDevs, "bob", "r", "no disagreement to override"},
		{"no entries", custodian, "alice", "r", "no verification entries"},
		{"empty reason", twoDevs, "alice", "  ", "give the reason"},
	} {
		err := mustOpen(t, dir).Override(tc.id, tc.solver, tc.reason)
		if certbank.ErrorCode(err) != certbank.Invalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want Invalid containing %q", tc.name, err, tc.want)
		}
	}
	if !mapsEqual(before, snapshot(t, dir)) {
		t.Fatalf("a refused override changed files")
	}

	const reason = `Reviewed: the stem asks what the Scrum Master should "do"; D stands.`
	if err := mustOpen(t, dir).Override(twoDevs, "alice", reason); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, dir)
	want := []string{`        override: "Reviewed: the stem asks what the Scrum Master should \"do\"; D stands."`}
	if got := inserted(t, before[file], after[file]); !slices.Equal(got, want) {
		t.Errorf("inserted %q, want %q", got, want)
	}
	if v := aliceOn(t, dir); v.Override != reason {
		t.Errorf("alice's entry = %+v", v)
	}
	st, _ := mustOpen(t, dir).Status("scrum-psm1")
	if c := st.Certifications[0]; c.Pending != 1 || c.Disagreeing != 0 || c.Verified != 4 {
		t.Errorf("after the override: %+v (twoDevs has one agreeing solver left, so it is pending)", c)
	}

	// Overriding again replaces the reason.
	if err := mustOpen(t, dir).Override(twoDevs, "alice", "second review"); err != nil {
		t.Fatal(err)
	}
	if v := aliceOn(t, dir); v.Override != "second review" {
		t.Errorf("alice's entry = %+v", v)
	}

	// Re-importing alice's same answer keeps the override; a changed answer drops it.
	for _, tc := range []struct {
		letter   string
		override string
		dropped  []string
	}{
		{"B", "second review", nil},
		{"A", "", []string{twoDevs}},
	} {
		sheet := writeSheet(t, dir, "scrum-psm1", verify.JSON, correct(map[string]string{twoDevs: tc.letter}))
		n, err := mustOpen(t, dir).Import("alice", date, sheet)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(n.OverridesDropped, tc.dropped) {
			t.Errorf("answer %s: dropped overrides %v, want %v", tc.letter, n.OverridesDropped, tc.dropped)
		}
		if v := aliceOn(t, dir); string(v.Answer) != tc.letter || v.Override != tc.override {
			t.Errorf("answer %s: entry %+v, want override %q", tc.letter, v, tc.override)
		}
	}
}

// aliceOn returns alice's entry on twoDevs.
func aliceOn(t *testing.T, dir string) certbank.Verification {
	t.Helper()
	q := question(t, dir, twoDevs)
	i := slices.IndexFunc(q.Verifications, func(v certbank.Verification) bool { return v.Solver == "alice" })
	if i < 0 {
		t.Fatalf("no entry from alice: %+v", q.Verifications)
	}
	return q.Verifications[i]
}

// bigFixture adds n generated questions to cissp (copies of the custodian
// question with new ids, key B) and returns the content dir and their ids.
func bigFixture(t *testing.T, n int) (string, []string) {
	t.Helper()
	dir := fixture(t)
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
    tests: "Generated question %d for the solver statistics"
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
	if err := os.WriteFile(filepath.Join(dir, "certifications/cissp/questions/99-generated.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, ids
}

// wrongOn answers the key (B on the generated questions) except on the
// first n of the generated ids, where it answers A.
func wrongOn(ids []string, n int) verify.Solver {
	except := map[string]certbank.Letter{}
	for i, id := range ids {
		except[id] = "B"
		if i < n {
			except[id] = "A"
		}
	}
	return keySolver(except)
}

func TestStatusSolverRates(t *testing.T) {
	t.Parallel()
	// 22 generated questions + 2 = 24 cissp questions.
	for _, tc := range []struct {
		name    string
		wrong   map[string]int // solver → how many of the generated questions it gets wrong
		only    map[string]int // solver → answers only this many questions (default all)
		median  float64
		judged  int
		suspect []string
	}{
		{
			// 24/24, 23/24, 21/24 (87.5 %): median 95.8 %, 87.5 is 8.3 points below.
			name:   "within ten points",
			wrong:  map[string]int{"a": 0, "b": 1, "c": 3},
			median: 23.0 / 24, judged: 3,
		},
		{
			// 24/24, 23/24, 20/24 (83.3 %): 12.5 points below the median.
			name:   "more than ten points below",
			wrong:  map[string]int{"a": 0, "b": 1, "c": 4},
			median: 23.0 / 24, judged: 3, suspect: []string{"c"},
		},
		{
			// Two solvers: the median is their mean, 91.7 %; 20/24 is 8.3 below.
			name:   "two solvers",
			wrong:  map[string]int{"a": 0, "c": 4},
			median: 44.0 / 48, judged: 2,
		},
		{
			// d answers only 10 questions, all wrong: too few to judge, and
			// not counted in the median.
			name:   "too few answers",
			wrong:  map[string]int{"a": 0, "b": 1, "d": 10},
			only:   map[string]int{"d": 10},
			median: 47.0 / 48, judged: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, ids := bigFixture(t, 22)
			for _, name := range slices.Sorted(maps.Keys(tc.wrong)) {
				o := verify.RunOptions{Solvers: []verify.NamedSolver{{Name: name, Solver: wrongOn(ids, tc.wrong[name])}}, Certification: "cissp", Date: date}
				if n, ok := tc.only[name]; ok {
					o.Solvers[0].Solver = limited(ids[:n], o.Solvers[0].Solver)
				}
				if _, err := mustOpen(t, dir).Run(context.Background(), o); err != nil && tc.only[name] == 0 {
					t.Fatal(err)
				}
			}
			st, err := mustOpen(t, dir).Status("cissp")
			if err != nil {
				t.Fatal(err)
			}
			var suspect []string
			for _, s := range st.Solvers {
				if s.Suspect {
					suspect = append(suspect, s.Name)
				}
			}
			if math.Abs(st.Median-tc.median) > 1e-9 || st.Judged != tc.judged || !slices.Equal(suspect, tc.suspect) {
				t.Errorf("median %.4f of %d, suspect %v; want %.4f of %d, %v\n%+v", st.Median, st.Judged, suspect, tc.median, tc.judged, tc.suspect, st.Solvers)
			}
		})
	}
}

// limited answers only the questions in ids and fails on the others.
func limited(ids []string, s verify.Solver) verify.Solver {
	return verify.SolverFunc(func(ctx context.Context, it verify.Item) (certbank.Letter, error) {
		if !slices.Contains(ids, it.ID) {
			return "", errors.New("not asked")
		}
		return s.Solve(ctx, it)
	})
}

func TestStatusCalibration(t *testing.T) {
	t.Parallel()
	dir := fixture(t)
	// sprintLength is easy: hard contradicts it. ssd is medium: rated easy
	// recall (a recall question labelled above easy). twoDevs is easy: rated
	// medium apply, within one level.
	rate(t, dir, "rita", "scrum-psm1", map[string]string{sprintLength: "hard analyse", twoDevs: "medium apply"})
	rate(t, dir, "sam", "scrum-psm1", map[string]string{sprintLength: "easy recall"})
	rate(t, dir, "rita", "cissp", map[string]string{ssd: "easy recall"})
	st, err := mustOpen(t, dir).Status("")
	if err != nil {
		t.Fatal(err)
	}
	want := []verify.CertStatus{
		{Slug: "cissp", Questions: 2, Pending: 2, Unrated: 1, Miscalibrated: 1},
		{Slug: "scrum-psm1", Questions: 5, Pending: 5, Unrated: 3, Miscalibrated: 1},
	}
	if !slices.Equal(st.Certifications, want) {
		t.Errorf("certifications = %+v, want %+v", st.Certifications, want)
	}
	var got []string
	for _, m := range st.Miscalibrated {
		for _, r := range m.Ratings {
			got = append(got, fmt.Sprintf("%s %s %s/%s", m.ID, m.Label, r.Rater, r.Difficulty))
		}
	}
	if w := []string{ssd + " medium rita/easy", sprintLength + " easy rita/hard"}; !slices.Equal(got, w) {
		t.Errorf("miscalibrated = %v, want %v", got, w)
	}
}
