// Package coverage measures a certification's questions against its plan:
// the blueprint's domain weights, the 30/50/20 difficulty mix, every
// objective of the exam guide and a balanced answer key, at the
// certification's target size or at a milestone on the way. It also plans
// the next question slots a writer should fill. It uses only the domain
// types and the standard library.
package coverage

import (
	"fmt"
	"slices"

	"github.com/certbank/certbank"
)

// The difficulty mix every certification aims at, in percent (easy,
// medium, hard), and how far a certification's share may stray from it.
var (
	DifficultyMix = []int{30, 50, 20}
	MixTolerance  = 5.0 // percentage points
)

// Answer-letter balance: each letter's share of the keys, in percent, from
// BalancedSize questions on, and below it.
const (
	BalancedSize          = 200
	LetterMin, LetterMax  = 20.0, 30.0
	SmallMin, SmallMax    = 15.0, 35.0
	objectiveShareDivisor = 2 // every objective gets at least floor(target / objectives / 2)
)

// Row is one line of a report: how many questions there are and how many
// the target asks for.
type Row struct {
	Name string `json:"name"`
	Have int    `json:"have"`
	Want int    `json:"want"`
}

// Short is how many questions the row lacks.
func (r Row) Short() int { return max(r.Want-r.Have, 0) }

// ObjectiveRow is one objective's line.
type ObjectiveRow struct {
	Code   string `json:"code"`
	Name   string `json:"name"`
	Domain string `json:"domain"`
	Have   int    `json:"have"`
	Min    int    `json:"min"`
}

// Report is a certification's coverage at one target.
type Report struct {
	Slug         string         `json:"slug"`
	Target       int            `json:"target"`
	Have         int            `json:"have"`
	Domains      []Row          `json:"domains"`
	Difficulties []Row          `json:"difficulties"`
	Objectives   []ObjectiveRow `json:"objectives"`
	Letters      []Row          `json:"letters"` // Want is the even share
	Empty        []string       `json:"empty_objectives"`
	// Problems says why the certification is short or off-mix at this
	// target; empty when it meets the plan.
	Problems []string `json:"problems"`
}

// OK reports whether the certification meets the plan at the report's
// target.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// Measure reports the coverage of qs (the certification's questions) at
// target questions.
func Measure(cert *certbank.Certification, qs []*certbank.Question, target int) *Report {
	r := &Report{Slug: cert.Slug, Target: target, Have: len(qs), Empty: []string{}, Problems: []string{}}
	domWant := certbank.Allocate(target, cert.Weights())
	diffWant := certbank.Allocate(target, DifficultyMix)
	byDomain := map[string]int{}
	byObjective := map[string]int{}
	byDiff := map[certbank.Difficulty]int{}
	byLetter := map[certbank.Letter]int{}
	for _, q := range qs {
		byDomain[q.Domain]++
		byObjective[q.Objective]++
		byDiff[q.Difficulty]++
		byLetter[q.Answer]++
	}
	if r.Have < target {
		r.Problems = append(r.Problems, fmt.Sprintf("%d questions, %d short of %d", r.Have, target-r.Have, target))
	}
	for i, d := range cert.Domains {
		row := Row{d.Name, byDomain[d.Name], domWant[i]}
		r.Domains = append(r.Domains, row)
		if row.Short() > 0 {
			r.Problems = append(r.Problems, fmt.Sprintf("domain %q has %d of %d (%d%% of %d)", d.Name, row.Have, row.Want, d.Weight, target))
		}
	}
	for i, d := range certbank.Difficulties {
		row := Row{string(d), byDiff[d], diffWant[i]}
		r.Difficulties = append(r.Difficulties, row)
		if row.Short() > 0 {
			r.Problems = append(r.Problems, fmt.Sprintf("%s: %d of %d (%d%% of %d)", d, row.Have, row.Want, DifficultyMix[i], target))
		} else if share := pct(row.Have, r.Have); r.Have > 0 && (share < float64(DifficultyMix[i])-MixTolerance || share > float64(DifficultyMix[i])+MixTolerance) {
			r.Problems = append(r.Problems, fmt.Sprintf("%s is %.1f%% of the questions; keep it within %.0f points of %d%%", d, share, MixTolerance, DifficultyMix[i]))
		}
	}
	minPer := 0
	if n := cert.Objectives(); n > 0 {
		minPer = target / n / objectiveShareDivisor
	}
	for _, d := range cert.Domains {
		for _, o := range d.Objectives {
			row := ObjectiveRow{o.Code, o.Name, d.Name, byObjective[o.Code], minPer}
			r.Objectives = append(r.Objectives, row)
			if row.Have == 0 {
				r.Empty = append(r.Empty, o.Code)
			}
			if row.Have < row.Min {
				r.Problems = append(r.Problems, fmt.Sprintf("objective %s has %d of at least %d", o.Code, row.Have, row.Min))
			}
		}
	}
	lo, hi := SmallMin, SmallMax
	if r.Have >= BalancedSize {
		lo, hi = LetterMin, LetterMax
	}
	for _, l := range certbank.Letters {
		row := Row{string(l), byLetter[l], r.Have / 4}
		r.Letters = append(r.Letters, row)
		if share := pct(row.Have, r.Have); r.Have > 0 && (share < lo || share > hi) {
			r.Problems = append(r.Problems, fmt.Sprintf("answer %s is the key of %.1f%% of the questions; keep each letter within %.0f–%.0f%%", l, share, lo, hi))
		}
	}
	return r
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// Slot is one question to write next: an objective at a difficulty, with
// what the bank already tests under that objective so that the writer
// tests something else.
type Slot struct {
	Objective  string              `json:"objective"`
	Name       string              `json:"name"`
	Domain     string              `json:"domain"`
	Difficulty certbank.Difficulty `json:"difficulty"`
	Covered    []string            `json:"covered"` // the tests lines already written under the objective
}

// Plan returns the next n slots that most reduce cert's shortfall toward
// target: each slot goes to the domain furthest below its share of the
// target (relative to that share), within it to the objective with the
// fewest questions, at the difficulty furthest below its share. Ties go to
// blueprint order, so the plan is deterministic.
func Plan(cert *certbank.Certification, qs []*certbank.Question, target, n int) []Slot {
	domWant := certbank.Allocate(target, cert.Weights())
	diffWant := certbank.Allocate(target, DifficultyMix)
	domHave := make([]int, len(cert.Domains))
	diffHave := make([]int, len(certbank.Difficulties))
	objHave := map[string]int{}
	covered := map[string][]string{}
	domIdx := map[string]int{}
	for i, d := range cert.Domains {
		domIdx[d.Name] = i
	}
	for _, q := range qs {
		if i, ok := domIdx[q.Domain]; ok {
			domHave[i]++
		}
		if r := q.Difficulty.Rank(); r >= 0 {
			diffHave[r]++
		}
		objHave[q.Objective]++
		if q.Tests != "" {
			covered[q.Objective] = append(covered[q.Objective], q.Tests)
		}
	}
	for k := range covered {
		slices.Sort(covered[k])
	}
	// need returns how far have is below want, relative to want; past the
	// target every row keeps growing in proportion.
	need := func(have, want int) float64 {
		if want <= 0 {
			return -float64(have + 1)
		}
		return float64(want-have) / float64(want)
	}
	var slots []Slot
	for range n {
		d := -1
		for i, dom := range cert.Domains {
			if len(dom.Objectives) == 0 {
				continue
			}
			if d < 0 || need(domHave[i], domWant[i]) > need(domHave[d], domWant[d]) {
				d = i
			}
		}
		if d < 0 {
			break
		}
		dom := cert.Domains[d]
		o := 0
		for i, obj := range dom.Objectives {
			if objHave[obj.Code] < objHave[dom.Objectives[o].Code] {
				o = i
			}
		}
		f := 0
		for i := range diffHave {
			if need(diffHave[i], diffWant[i]) > need(diffHave[f], diffWant[f]) {
				f = i
			}
		}
		obj := dom.Objectives[o]
		slots = append(slots, Slot{Objective: obj.Code, Name: obj.Name, Domain: dom.Name,
			Difficulty: certbank.Difficulties[f], Covered: append([]string{}, covered[obj.Code]...)})
		domHave[d]++
		diffHave[f]++
		objHave[obj.Code]++
	}
	return slots
}
