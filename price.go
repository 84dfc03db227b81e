package certbank

import (
	"fmt"
	"strconv"
	"strings"
)

// USDC is an amount in atomic USDC units: 6 decimals, so 10000 is 0.01 USDC.
type USDC int64

// String formats the amount as a decimal USDC string without trailing zeros,
// e.g. "0.01", "0.007", "1".
func (u USDC) String() string {
	neg := u < 0
	if neg {
		u = -u
	}
	s := fmt.Sprintf("%d.%06d", u/1e6, u%1e6)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if neg {
		s = "-" + s
	}
	return s
}

// Atomic returns the amount as a decimal string of atomic units, e.g. "10000".
func (u USDC) Atomic() string { return strconv.FormatInt(int64(u), 10) }

// PriceEntry is the price of one pay-per-request size.
type PriceEntry struct {
	Questions int  `json:"questions,omitempty"`
	Amount    USDC `json:"amount,omitempty"`
}

// Pricing is the pay-per-request price list.
type Pricing struct {
	Entries []PriceEntry `json:"entries,omitempty"`
	// NoAnswerDiscountPercent is taken off when include_answer=false.
	NoAnswerDiscountPercent int `json:"no_answer_discount_percent,omitempty"`
}

// Limits returns the allowed request sizes in ascending order of the list.
func (p Pricing) Limits() []int {
	out := make([]int, len(p.Entries))
	for i, e := range p.Entries {
		out[i] = e.Questions
	}
	return out
}

// Price returns the price of a request for limit questions. Without answers
// the discount applies, rounded half up to a whole atomic unit: 10000 at
// 30 % off is 7000. An unknown limit is an Invalid error.
func (p Pricing) Price(limit int, includeAnswer bool) (USDC, error) {
	for _, e := range p.Entries {
		if e.Questions != limit {
			continue
		}
		if includeAnswer {
			return e.Amount, nil
		}
		return p.discounted(e.Amount), nil
	}
	return 0, Errorf(Invalid, "limit %d is not one of %s", limit, joinInts(p.Limits()))
}

func (p Pricing) discounted(a USDC) USDC {
	keep := int64(100 - p.NoAnswerDiscountPercent)
	return USDC((int64(a)*keep + 50) / 100)
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
