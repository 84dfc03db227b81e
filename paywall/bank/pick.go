package bank

import (
	"math/rand/v2"
	"sort"

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

// Quotas splits n questions over domains in proportion to their weights by
// largest remainder (ties to the earlier domain), never giving a domain more
// than avail of it: a domain's shortfall goes to the others, again by
// weight. The quotas sum to min(n, the sum of avail).
func Quotas(weights, avail []int, n int) []int {
	q := make([]int, len(weights))
	total := 0
	for _, a := range avail {
		total += a
	}
	n = min(n, total)
	for {
		left := n
		for _, x := range q {
			left -= x
		}
		if left <= 0 {
			return q
		}
		var open []int
		w := 0
		for i := range q {
			if q[i] < avail[i] {
				open = append(open, i)
				w += weights[i]
			}
		}
		weight := func(i int) int {
			if w == 0 {
				return 1 // only weightless domains are left: share equally
			}
			return weights[i]
		}
		sum := w
		if w == 0 {
			sum = len(open)
		}
		type rem struct{ i, r int }
		var rems []rem
		given := 0
		for _, i := range open {
			exact := left * weight(i)
			add := min(exact/sum, avail[i]-q[i])
			q[i] += add
			given += add
			if q[i] < avail[i] {
				rems = append(rems, rem{i, exact % sum})
			}
		}
		sort.SliceStable(rems, func(a, b int) bool { return rems[a].r > rems[b].r })
		for _, r := range rems {
			if given == left {
				break
			}
			q[r.i]++
			given++
		}
		if given == 0 {
			return q // nothing more can be placed
		}
	}
}

// PickByDomain returns a Picker that draws quotas[i] random questions of
// groups[i] for each domain i, within the unique-question rule shared over
// all of them, and shuffles the result so that domains are interleaved as
// on a real exam.
func PickByDomain(groups [][]*Entry, quotas []int) Picker {
	return func(seen Seen, newAllowed int) []*Entry {
		var out []*Entry
		taken := 0
		for i, g := range groups {
			if newAllowed == certbank.Unlimited {
				out = append(out, Choose(g, quotas[i], nil)...)
				continue
			}
			out = append(out, Choose(g, quotas[i], func(e *Entry) bool {
				if seen.Has(e.Hash) {
					return true
				}
				if taken < newAllowed {
					taken++
					return true
				}
				return false
			})...)
		}
		rand.Shuffle(len(out), func(a, b int) { out[a], out[b] = out[b], out[a] })
		return out
	}
}
