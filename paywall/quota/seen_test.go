package quota

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// setOf lists a seen's entries in order, checking the parts are sorted,
// duplicate-free and disjoint.
func setOf(t *testing.T, s seen) []uint64 {
	t.Helper()
	var all []uint64
	for i := range s.base.len() {
		h := s.base.at(i)
		if i > 0 && h <= s.base.at(i-1) {
			t.Fatalf("base not strictly sorted at %d: %x after %x", i, h, s.base.at(i-1))
		}
		all = append(all, h)
	}
	for i := range s.recent.len() {
		all = append(all, s.recent.at(i))
	}
	slices.Sort(all)
	if len(slices.Compact(slices.Clone(all))) != len(all) {
		t.Fatalf("the parts overlap or recent repeats an entry")
	}
	return all
}

func TestRecentLimit(t *testing.T) {
	for _, tc := range []struct{ n, want int }{
		{0, 256}, {100, 256}, {3276, 256}, {3277, 256}, {3290, 256}, {13000, 509}, {1 << 20, 4579},
	} {
		if got := recentLimit(tc.n); got != tc.want {
			t.Errorf("recentLimit(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

func TestSeenAddKeepsTheWholeSet(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var s seen
	want := map[uint64]bool{}
	folds := 0
	for req := range 3000 {
		hs := make([]uint64, 10)
		for i := range hs {
			// a bank of 5,000 questions: later requests repeat earlier ones
			hs[i] = uint64(r.IntN(5000)) * 0x9e3779b97f4a7c15
		}
		if req%7 == 0 {
			hs[3] = hs[2] // duplicates within a request
		}
		before := s
		beforeBase := slices.Clone(s.base)
		beforeRecent := slices.Clone(s.recent)
		next, folded := s.add(hs)
		// add never changes its receiver's bytes
		if !slices.Equal(before.base, beforeBase) || !slices.Equal(before.recent, beforeRecent) {
			t.Fatalf("request %d: add changed the old set in place", req)
		}
		for _, h := range hs {
			want[h] = true
		}
		got := setOf(t, next)
		if len(got) != len(want) || next.len() != len(want) {
			t.Fatalf("request %d: %d entries (len %d), want %d", req, len(got), next.len(), len(want))
		}
		for _, h := range got {
			if !want[h] {
				t.Fatalf("request %d: %x in the set, never added", req, h)
			}
		}
		for _, h := range hs {
			if !next.Has(h) {
				t.Fatalf("request %d: has(%x) = false after adding it", req, h)
			}
		}
		if folded {
			folds++
			if next.recent.len() != 0 {
				t.Fatalf("request %d: folded but recent holds %d", req, next.recent.len())
			}
		} else {
			if !slices.Equal(next.base, s.base) {
				t.Fatalf("request %d: base changed without a fold", req)
			}
			if !bytes.HasPrefix(next.recent, s.recent) {
				t.Fatalf("request %d: recent did not grow by appending", req)
			}
		}
		if next.recent.len() > recentLimit(next.base.len()) {
			t.Fatalf("request %d: recent %d over its limit %d", req, next.recent.len(), recentLimit(next.base.len()))
		}
		s = next
	}
	if folds == 0 || folds > 40 {
		t.Errorf("%d folds in 3,000 requests; want a few (base rewritten rarely)", folds)
	}
}

func TestSeenMerge(t *testing.T) {
	mk := func(hs ...uint64) seenSet { return seenSetOf(hs) }
	for _, tc := range []struct{ a, b, want seenSet }{
		{mk(), mk(), mk()},
		{mk(1, 5, 9), mk(), mk(1, 5, 9)},
		{mk(), mk(2, 3), mk(2, 3)},
		{mk(1, 5, 9), mk(2, 3, 10), mk(1, 2, 3, 5, 9, 10)},
		{mk(4, 5), mk(1, 2), mk(1, 2, 4, 5)},
	} {
		if got := tc.a.merge(tc.b); !slices.Equal(got, tc.want) {
			t.Errorf("merge(%x, %x) = %x, want %x", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestSeenSetOf(t *testing.T) {
	got := seenSetOf([]uint64{5, 1, 5, 1 << 63, 3})
	want := []uint64{1, 3, 5, 1 << 63}
	if got.len() != len(want) {
		t.Fatalf("seenSetOf: %d entries, want %d", got.len(), len(want))
	}
	for i, h := range want {
		if got.at(i) != h || !got.has(h) {
			t.Fatalf("seenSetOf: entry %d = %x, want %x (sorted, without repeats)", i, got.at(i), h)
		}
	}
	if got.has(2) || got.has(6) || seenSetOf(nil).has(0) {
		t.Fatal("has reports an entry that is not in the set")
	}
}
