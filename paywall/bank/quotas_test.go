package bank

import (
	"slices"
	"testing"
)

func TestQuotas(t *testing.T) {
	tests := []struct {
		name    string
		weights []int
		avail   []int
		n       int
		want    []int
	}{
		{"exact shares", []int{50, 30, 20}, []int{100, 100, 100}, 10, []int{5, 3, 2}},
		{"largest remainder", []int{34, 26, 24, 16}, []int{99, 99, 99, 99}, 85, []int{29, 22, 20, 14}},
		{"ties go to the earlier domain", []int{1, 1, 1}, []int{9, 9, 9}, 4, []int{2, 1, 1}},
		{"a short domain's rest goes to the others by weight", []int{50, 30, 20}, []int{2, 100, 100}, 10, []int{2, 5, 3}},
		{"the bank is smaller than the exam", []int{50, 50}, []int{3, 4}, 10, []int{3, 4}},
		{"weightless domains share what is left", []int{100, 0, 0}, []int{1, 5, 5}, 5, []int{1, 2, 2}},
		{"nothing to draw", []int{60, 40}, []int{0, 0}, 5, []int{0, 0}},
	}
	for _, tc := range tests {
		got := Quotas(tc.weights, tc.avail, tc.n)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: Quotas(%v, %v, %d) = %v, want %v", tc.name, tc.weights, tc.avail, tc.n, got, tc.want)
		}
	}
}
