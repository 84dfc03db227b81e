package coverage_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/coverage"
)

func TestAllocate(t *testing.T) {
	tests := []struct {
		total   int
		weights []int
		want    []int
	}{
		{500, []int{30, 50, 20}, []int{150, 250, 100}},
		{10, []int{30, 50, 20}, []int{3, 5, 2}},
		{7, []int{30, 50, 20}, []int{2, 4, 1}},                                              // 2.1, 3.5, 1.4: the unit left goes to .5
		{250, []int{16, 10, 13, 13, 13, 12, 13, 10}, []int{40, 25, 33, 33, 32, 30, 32, 25}}, // ties go to the earlier weight
		{3, []int{1, 1, 1, 1}, []int{1, 1, 1, 0}},
		{0, []int{50, 50}, []int{0, 0}},
		{5, []int{0, 0}, []int{0, 0}},
	}
	for _, tt := range tests {
		got := certbank.Allocate(tt.total, tt.weights)
		if !slices.Equal(got, tt.want) {
			t.Errorf("Allocate(%d, %v) = %v, want %v", tt.total, tt.weights, got, tt.want)
		}
		sum := 0
		for _, g := range got {
			sum += g
		}
		if tt.total > 0 && slices.Max(tt.weights) > 0 && sum != tt.total {
			t.Errorf("Allocate(%d, %v) sums to %d", tt.total, tt.weights, sum)
		}
	}
}

// cert has two domains (60/40) with three and two objectives.
func cert() *certbank.Certification {
	return &certbank.Certification{Slug: "cissp", Domains: []certbank.Domain{
		{Name: "Ops", Weight: 60, Objectives: []certbank.Objective{{Code: "1.1", Name: "Monitor"}, {Code: "1.2", Name: "Respond"}, {Code: "1.3", Name: "Recover"}}},
		{Name: "Assets", Weight: 40, Objectives: []certbank.Objective{{Code: "2.1", Name: "Classify"}, {Code: "2.2", Name: "Retain"}}},
	}}
}

// bank makes n questions cycling through the objectives, difficulties in
// the 30/50/20 mix and keys A–D, unless mix says otherwise.
func bank(n int, mix func(i int) (obj string, d certbank.Difficulty, key certbank.Letter)) []*certbank.Question {
	var qs []*certbank.Question
	for i := range n {
		obj, d, k := mix(i)
		_, dom, _ := cert().Objective(obj)
		qs = append(qs, &certbank.Question{ID: fmt.Sprint(i), Domain: dom.Name, Objective: obj, Difficulty: d, Answer: k,
			Tests: fmt.Sprintf("fact %d of %s", i, obj)})
	}
	return qs
}

// balanced follows the blueprint: 6 of 10 in Ops, 3/5/2 difficulties, keys cycling.
func balanced(i int) (string, certbank.Difficulty, certbank.Letter) {
	objs := []string{"1.1", "2.1", "1.2", "2.2", "1.3", "1.1", "2.1", "1.2", "2.2", "1.3"}
	diffs := []certbank.Difficulty{"easy", "medium", "hard", "medium", "easy", "medium", "easy", "medium", "hard", "medium"}
	return objs[i%10], diffs[i%10], certbank.Letters[i%4]
}

func TestMeasure(t *testing.T) {
	tests := []struct {
		name     string
		qs       []*certbank.Question
		target   int
		problems []string // prefixes, in order
	}{
		{"meets the plan", bank(20, balanced), 20, nil},
		{"meets a smaller milestone", bank(20, balanced), 10, nil},
		{"short of the target", bank(20, balanced), 40, []string{
			"20 questions, 20 short of 40", `domain "Ops" has 12 of 24`, `domain "Assets" has 8 of 16`,
			"easy: 6 of 12", "medium: 10 of 20", "hard: 4 of 8"}},
		{"off-mix difficulty", bank(20, func(i int) (string, certbank.Difficulty, certbank.Letter) {
			o, _, k := balanced(i)
			return o, []certbank.Difficulty{"easy", "medium", "hard", "hard", "medium"}[i%5], k
		}), 20, []string{"easy: 4 of 6", "medium: 8 of 10"}},
		{"an objective with nothing", bank(20, func(i int) (string, certbank.Difficulty, certbank.Letter) {
			o, d, k := balanced(i)
			if o == "2.2" {
				o = "2.1"
			}
			return o, d, k
		}), 20, []string{"objective 2.2 has 0 of at least 2"}},
		{"unbalanced keys", bank(20, func(i int) (string, certbank.Difficulty, certbank.Letter) {
			o, d, _ := balanced(i)
			return o, d, certbank.Letters[min(i%5, 3)]
		}), 20, []string{"answer D is the key of 40.0% of the questions"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := coverage.Measure(cert(), tt.qs, tt.target)
			if r.OK() != (len(tt.problems) == 0) {
				t.Errorf("OK() = %v with problems %q", r.OK(), r.Problems)
			}
			for _, want := range tt.problems {
				if !slices.ContainsFunc(r.Problems, func(p string) bool { return strings.HasPrefix(p, want) }) {
					t.Errorf("problems %q lack %q", r.Problems, want)
				}
			}
		})
	}
	r := coverage.Measure(cert(), bank(20, balanced)[:10], 20)
	if want := []coverage.Row{{"Ops", 6, 12}, {"Assets", 4, 8}}; !slices.Equal(r.Domains, want) {
		t.Errorf("domains %v, want %v", r.Domains, want)
	}
	if want := []coverage.Row{{"easy", 3, 6}, {"medium", 5, 10}, {"hard", 2, 4}}; !slices.Equal(r.Difficulties, want) {
		t.Errorf("difficulties %v, want %v", r.Difficulties, want)
	}
}

func TestPlan(t *testing.T) {
	// Ten questions all in Ops 1.1, all easy: the plan must fill Assets and
	// the other objectives first, and medium and hard.
	qs := bank(10, func(i int) (string, certbank.Difficulty, certbank.Letter) {
		return "1.1", "easy", certbank.Letters[i%4]
	})
	slots := coverage.Plan(cert(), qs, 20, 10)
	if len(slots) != 10 {
		t.Fatalf("%d slots, want 10", len(slots))
	}
	count := map[string]int{}
	for _, s := range slots {
		count[s.Domain]++
		count[s.Objective]++
		count[string(s.Difficulty)]++
	}
	// Toward 20: Ops 12 (has 10), Assets 8 (has 0); easy 6 (has 10), medium 10, hard 4.
	if count["Assets"] != 8 || count["Ops"] != 2 {
		t.Errorf("domains: %v, want 8 Assets and 2 Ops", count)
	}
	if count["easy"] != 0 || count["medium"] != 7 || count["hard"] != 3 {
		t.Errorf("difficulties: %v, want 0 easy, 7 medium, 3 hard", count)
	}
	if count["1.1"] != 0 || count["1.2"] != 1 || count["1.3"] != 1 || count["2.1"] != 4 || count["2.2"] != 4 {
		t.Errorf("objectives: %v", count)
	}
	// The slots of 2.1 list nothing yet; a slot of 1.1 would list its ten tests.
	for _, s := range slots {
		if s.Objective == "2.1" && len(s.Covered) != 0 {
			t.Errorf("2.1 covered = %v, want nothing", s.Covered)
		}
	}
	more := coverage.Plan(cert(), qs, 200, 40)
	for _, s := range more {
		if s.Objective == "1.1" && len(s.Covered) != 10 {
			t.Errorf("1.1 covered = %d lines, want the 10 written", len(s.Covered))
		}
	}
	// Filling the plan meets the target's mix.
	filled := slices.Clone(qs)
	for i, s := range coverage.Plan(cert(), qs, 40, 30) {
		filled = append(filled, &certbank.Question{ID: fmt.Sprint("p", i), Domain: s.Domain, Objective: s.Objective, Difficulty: s.Difficulty, Answer: certbank.Letters[(i+2)%4]})
	}
	r := coverage.Measure(cert(), filled, 40)
	for _, p := range r.Problems {
		if !strings.HasPrefix(p, "easy") && !strings.Contains(p, "of the questions") {
			t.Errorf("after filling the plan: %s", p)
		}
	}
	// Deterministic.
	if a, b := coverage.Plan(cert(), qs, 40, 30), coverage.Plan(cert(), qs, 40, 30); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("two plans of the same bank differ")
	}
}
