package certbank

import (
	"fmt"
	"slices"
	"strings"
)

// AnyDifficulty is the difficulty of an Offer without a difficulty filter:
// a request that leaves the difficulty parameter out.
const AnyDifficulty = "any"

// Stock is how many published questions a certification has of each
// difficulty: what the pay-per-request route can sell.
type Stock map[Difficulty]int

// Count returns the questions of difficulty d, or of every difficulty when
// d is "".
func (s Stock) Count(d Difficulty) int {
	if d != "" {
		return s[d]
	}
	n := 0
	for _, d := range Difficulties {
		n += s[d]
	}
	return n
}

// Offer is one request the pay-per-request route can fill for a
// certification: Limit questions of one difficulty, or of any.
type Offer struct {
	Limit      int    `json:"limit"`
	Difficulty string `json:"difficulty"` // easy, medium, hard, or "any" (no difficulty parameter)
}

// Filter returns the difficulty parameter of o: "" for "any".
func (o Offer) Filter() Difficulty {
	if o.Difficulty == AnyDifficulty {
		return ""
	}
	return Difficulty(o.Difficulty)
}

// offerDifficulties are the difficulties of the offers of one limit, in
// the order the documents list them.
var offerDifficulties = []Difficulty{"", Easy, Medium, Hard}

func offerOf(limit int, d Difficulty) Offer {
	if d == "" {
		return Offer{Limit: limit, Difficulty: AnyDifficulty}
	}
	return Offer{Limit: limit, Difficulty: string(d)}
}

// CanFill reports whether a pay-per-request for limit questions of
// difficulty d ("" for any) can be filled: limit is one of p's sizes and s
// holds at least limit questions of d (of every difficulty together for "").
// It is the one rule behind both the paid route's 402 and the offers that
// the catalog, /.well-known/x402.json and the OpenAPI description advertise.
func (p Pricing) CanFill(s Stock, limit int, d Difficulty) bool {
	for _, e := range p.Entries {
		if e.Questions == limit {
			return limit > 0 && s.Count(d) >= limit
		}
	}
	return false
}

// Offers splits every combination of p's sizes (in price-list order) and
// difficulties (any, easy, medium, hard) into those s can fill and those it
// cannot, by CanFill. Neither slice is nil, so both encode as JSON arrays.
func (p Pricing) Offers(s Stock) (fillable, unfillable []Offer) {
	fillable, unfillable = []Offer{}, []Offer{}
	for _, e := range p.Entries {
		for _, d := range offerDifficulties {
			if p.CanFill(s, e.Questions, d) {
				fillable = append(fillable, offerOf(e.Questions, d))
			} else {
				unfillable = append(unfillable, offerOf(e.Questions, d))
			}
		}
	}
	return fillable, unfillable
}

// SmallestLimit returns the smallest of p's sizes that s can fill without
// a difficulty filter (then it can fill no smaller request with one), and
// false when s can fill none.
func (p Pricing) SmallestLimit(s Stock) (int, bool) {
	best := 0
	for _, e := range p.Entries {
		if p.CanFill(s, e.Questions, "") && (best == 0 || e.Questions < best) {
			best = e.Questions
		}
	}
	return best, best > 0
}

// CheckOffer returns nil when p.CanFill(s, limit, d), and otherwise an
// Invalid error for certification slug that says how many questions match,
// which limits and difficulties can be filled, and what to do.
func (p Pricing) CheckOffer(slug string, s Stock, limit int, d Difficulty) error {
	if p.CanFill(s, limit, d) {
		return nil
	}
	if _, err := p.Price(limit, true); err != nil {
		return err
	}
	what := fmt.Sprintf("%d %s questions are published", s.Count(d), slug)
	if d != "" {
		what = fmt.Sprintf("%d %s questions of difficulty %s are published", s.Count(d), slug, d)
	}
	fillable, _ := p.Offers(s)
	if len(fillable) == 0 {
		return Errorf(Invalid, "only %s, fewer than limit=%d, and %s has too few questions for any paid request yet (nothing was charged); use the free sample feed or an API key meanwhile", what, limit, slug)
	}
	return Errorf(Invalid, "only %s, fewer than limit=%d (nothing was charged); %s can fill %s (difficulty any: leave it out); lower the limit or change the difficulty", what, limit, slug, DescribeOffers(fillable))
}

// UnavailableNote describes the combinations of p that s cannot fill, for
// the documents that list offers, or returns "" when s can fill them all.
func (p Pricing) UnavailableNote(s Stock) string {
	fillable, unfillable := p.Offers(s)
	if len(unfillable) == 0 {
		return ""
	}
	if len(fillable) == 0 {
		return fmt.Sprintf("No paid request can be filled yet: %d questions are published (%d easy, %d medium, %d hard), fewer than the smallest limit %d; requesting one answers 400 before any payment.",
			s.Count(""), s[Easy], s[Medium], s[Hard], slices.Min(p.Limits()))
	}
	return fmt.Sprintf("Not available until more questions are published (%d in all: %d easy, %d medium, %d hard): %s; requesting them answers 400 before any payment.",
		s.Count(""), s[Easy], s[Medium], s[Hard], DescribeOffers(unfillable))
}

// DescribeOffers words offers for people, grouped by limit in their order:
// "limit 10 with difficulty any, easy, medium or hard; limit 25 with
// difficulty any".
func DescribeOffers(offers []Offer) string {
	var parts []string
	for i := 0; i < len(offers); {
		j := i
		var ds []string
		for ; j < len(offers) && offers[j].Limit == offers[i].Limit; j++ {
			ds = append(ds, offers[j].Difficulty)
		}
		parts = append(parts, fmt.Sprintf("limit %d with difficulty %s", offers[i].Limit, orList(ds)))
		i = j
	}
	return strings.Join(parts, "; ")
}

// orList joins xs as "a", "a or b", "a, b or c".
func orList(xs []string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}
