package bank

import (
	"math/rand/v2"

	"github.com/certbank/certbank"
)

// Seen tells a picker which questions a key has been served, by their
// Hash.
type Seen interface {
	Has(hash uint64) bool
}

// Picker chooses the questions of a request given the key's seen set and
// how many questions it has not seen it may still be given
// (certbank.Unlimited for no limit).
type Picker func(seen Seen, newAllowed int) []*Entry

// Choose picks up to k entries of cands at random, preferring order from a
// random permutation; accept decides whether an entry may be taken.
func Choose(cands []*Entry, k int, accept func(*Entry) bool) []*Entry {
	n := len(cands)
	out := make([]*Entry, 0, min(k, n))
	if n == 0 || k <= 0 {
		return out
	}
	if accept == nil && k*4 < n {
		// sparse: rejection sampling of distinct entries (a linear
		// check is cheaper than a map for the usual few)
		var taken map[int]bool
		if k > 32 {
			taken = make(map[int]bool, k)
		}
	draw:
		for len(out) < k {
			i := rand.IntN(n)
			e := cands[i]
			if taken != nil {
				if taken[i] {
					continue
				}
				taken[i] = true
			} else {
				for _, o := range out {
					if o == e {
						continue draw
					}
				}
			}
			out = append(out, e)
		}
		return out
	}
	for _, i := range rand.Perm(n) {
		if len(out) == k {
			break
		}
		if accept == nil || accept(cands[i]) {
			out = append(out, cands[i])
		}
	}
	return out
}

// PickRandom returns a Picker that draws k random questions of cands
// within the unique-question rule: new questions only while the key may
// still see new ones, otherwise only questions it has seen.
func PickRandom(cands []*Entry, k int) Picker {
	return func(seen Seen, newAllowed int) []*Entry {
		if newAllowed == certbank.Unlimited {
			return Choose(cands, k, nil)
		}
		taken := 0
		return Choose(cands, k, func(e *Entry) bool {
			if seen.Has(e.Hash) {
				return true
			}
			if taken < newAllowed {
				taken++
				return true
			}
			return false
		})
	}
}

// PickPage returns a Picker that takes a page of cands in their stable
// order (subject to the same unique-question rule).
func PickPage(cands []*Entry, offset, k int) Picker {
	return func(seen Seen, newAllowed int) []*Entry {
		end := min(offset+k, len(cands))
		if offset >= end {
			return nil
		}
		out := make([]*Entry, 0, end-offset)
		taken := 0
		for _, e := range cands[offset:end] {
			if newAllowed != certbank.Unlimited && !seen.Has(e.Hash) {
				if taken >= newAllowed {
					continue
				}
				taken++
			}
			out = append(out, e)
		}
		return out
	}
}
