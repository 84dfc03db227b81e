package certbank_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/certbank/certbank"
)

var testPricing = certbank.Pricing{
	Entries:                 []certbank.PriceEntry{{Questions: 10, Amount: 10000}, {Questions: 25, Amount: 20000}, {Questions: 50, Amount: 40000}},
	NoAnswerDiscountPercent: 30,
}

// TestCanFill: a combination can be filled when the price list sells its
// limit and the certification has at least limit published questions of
// its difficulty (of all difficulties together for any), the boundary
// included.
func TestCanFill(t *testing.T) {
	stock := certbank.Stock{certbank.Easy: 12, certbank.Medium: 25, certbank.Hard: 9} // 46 in all
	tests := []struct {
		name  string
		limit int
		d     certbank.Difficulty
		want  bool
	}{
		{"any, well within", 10, "", true},
		{"any, within", 25, "", true},
		{"any, one short", 50, "", false},
		{"easy, within", 10, certbank.Easy, true},
		{"easy, short", 25, certbank.Easy, false},
		{"medium, exactly limit", 25, certbank.Medium, true},
		{"hard, one short", 10, certbank.Hard, false},
		{"a limit the price list does not sell", 5, "", false},
		{"zero", 0, "", false},
		{"negative", -1, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := testPricing.CanFill(stock, tt.limit, tt.d); got != tt.want {
				t.Errorf("CanFill(limit %d, %q) = %v, want %v", tt.limit, tt.d, got, tt.want)
			}
			if err := testPricing.CheckOffer("cissp", stock, tt.limit, tt.d); (err == nil) != tt.want {
				t.Errorf("CheckOffer(limit %d, %q) = %v, want nil exactly when CanFill", tt.limit, tt.d, err)
			} else if err != nil && certbank.ErrorCode(err) != certbank.Invalid {
				t.Errorf("CheckOffer error code %s, want %s", certbank.ErrorCode(err), certbank.Invalid)
			}
		})
	}
	if testPricing.CanFill(certbank.Stock{}, 10, "") || (certbank.Pricing{}).CanFill(stock, 10, "") {
		t.Error("an empty stock or an empty price list fills nothing")
	}
}

// TestOffers: every combination is in exactly one of the two lists, in
// price-list order with any, easy, medium, hard within a limit, and the
// smallest limit and the words follow.
func TestOffers(t *testing.T) {
	type o = certbank.Offer
	tests := []struct {
		name       string
		stock      certbank.Stock
		fillable   []o
		unfillable []o
		smallest   int
		note       string // a part of UnavailableNote; "" means the note is empty
	}{
		{
			name:     "everything",
			stock:    certbank.Stock{certbank.Easy: 50, certbank.Medium: 60, certbank.Hard: 50},
			fillable: []o{{10, "any"}, {10, "easy"}, {10, "medium"}, {10, "hard"}, {25, "any"}, {25, "easy"}, {25, "medium"}, {25, "hard"}, {50, "any"}, {50, "easy"}, {50, "medium"}, {50, "hard"}},
			smallest: 10,
		},
		{
			name:       "some",
			stock:      certbank.Stock{certbank.Easy: 12, certbank.Medium: 25, certbank.Hard: 9},
			fillable:   []o{{10, "any"}, {10, "easy"}, {10, "medium"}, {25, "any"}, {25, "medium"}},
			unfillable: []o{{10, "hard"}, {25, "easy"}, {25, "hard"}, {50, "any"}, {50, "easy"}, {50, "medium"}, {50, "hard"}},
			smallest:   10,
			note:       "(46 in all: 12 easy, 25 medium, 9 hard): limit 10 with difficulty hard; limit 25 with difficulty easy or hard; limit 50 with difficulty any, easy, medium or hard;",
		},
		{
			name:       "too few for anything",
			stock:      certbank.Stock{certbank.Easy: 3, certbank.Medium: 2, certbank.Hard: 1},
			unfillable: []o{{10, "any"}, {10, "easy"}, {10, "medium"}, {10, "hard"}, {25, "any"}, {25, "easy"}, {25, "medium"}, {25, "hard"}, {50, "any"}, {50, "easy"}, {50, "medium"}, {50, "hard"}},
			note:       "No paid request can be filled yet: 6 questions are published (3 easy, 2 medium, 1 hard), fewer than the smallest limit 10;",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fill, unfill := testPricing.Offers(tt.stock)
			if tt.fillable == nil {
				tt.fillable = []o{}
			}
			if tt.unfillable == nil {
				tt.unfillable = []o{}
			}
			if !reflect.DeepEqual(fill, tt.fillable) || !reflect.DeepEqual(unfill, tt.unfillable) {
				t.Errorf("Offers = %v / %v, want %v / %v", fill, unfill, tt.fillable, tt.unfillable)
			}
			for _, of := range fill {
				if !testPricing.CanFill(tt.stock, of.Limit, of.Filter()) {
					t.Errorf("offered %v, which CanFill refuses", of)
				}
			}
			for _, of := range unfill {
				if testPricing.CanFill(tt.stock, of.Limit, of.Filter()) {
					t.Errorf("withheld %v, which CanFill accepts", of)
				}
			}
			smallest, ok := testPricing.SmallestLimit(tt.stock)
			if smallest != tt.smallest || ok != (tt.smallest > 0) {
				t.Errorf("SmallestLimit = %d, %v, want %d", smallest, ok, tt.smallest)
			}
			note := testPricing.UnavailableNote(tt.stock)
			if (note == "") != (tt.note == "") || !strings.Contains(note, tt.note) {
				t.Errorf("UnavailableNote = %q, want it to contain %q", note, tt.note)
			}
		})
	}
}

// TestCheckOfferMessage: the 400 says what matched, what can be filled and
// what to do.
func TestCheckOfferMessage(t *testing.T) {
	tests := []struct {
		name  string
		stock certbank.Stock
		limit int
		d     certbank.Difficulty
		want  []string
	}{
		{"too few hard", certbank.Stock{certbank.Easy: 12, certbank.Medium: 25, certbank.Hard: 9}, 10, certbank.Hard,
			[]string{"only 9 cissp questions of difficulty hard are published, fewer than limit=10", "nothing was charged",
				"cissp can fill limit 10 with difficulty any, easy or medium; limit 25 with difficulty any or medium", "lower the limit or change the difficulty"}},
		{"too few in all", certbank.Stock{certbank.Easy: 12, certbank.Medium: 25, certbank.Hard: 9}, 50, "",
			[]string{"only 46 cissp questions are published, fewer than limit=50", "can fill limit 10"}},
		{"nothing to sell", certbank.Stock{certbank.Easy: 3}, 10, "",
			[]string{"only 3 cissp questions are published", "too few questions for any paid request", "free sample feed"}},
		{"a limit not sold", certbank.Stock{certbank.Easy: 30}, 11, "",
			[]string{"limit 11 is not one of 10, 25, 50"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := testPricing.CheckOffer("cissp", tt.stock, tt.limit, tt.d)
			if err == nil {
				t.Fatal("CheckOffer = nil, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(certbank.ErrorMessage(err), w) {
					t.Errorf("message %q does not contain %q", certbank.ErrorMessage(err), w)
				}
			}
		})
	}
}
