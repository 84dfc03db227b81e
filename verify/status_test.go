package verify_test

import (
	"context"
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
				{Slug: "cissp", Questions: 2, Pending: 2},
				{Slug: "scrum-psm1", Questions: 5, Pending: 5},
			},
			pending: []string{custodian, ssd, sprintLength, sizing, twoDevs, whoDecides, testingDept},
		},
		{
			name: "two solvers", dir: verified,
			certs: []verify.CertStatus{
				{Slug: "cissp", Questions: 2, Pending: 2},
				{Slug: "scrum-psm1", Questions: 5, Verified: 4, Disagreeing: 1},
			},
			pending:     []string{custodian, ssd},
			disagreeing: []string{twoDevs},
		},
		{
			name: "one certification", dir: verified, slug: "scrum-psm1",
			certs:       []verify.CertStatus{{Slug: "scrum-psm1", Questions: 5, Verified: 4, Disagreeing: 1}},
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
