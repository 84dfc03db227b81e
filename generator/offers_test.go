package generator_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
)

// wantOffers is what the content says a certification's paid offers are,
// computed from its published questions without the generator: for each
// price size in order, "any" when at least that many questions are
// published, then each difficulty with at least that many. smallest is the
// smallest size with "any" (0 when none).
func wantOffers(pub []*certbank.Question, limits []int) (offers []certbank.Offer, smallest int) {
	by := map[string]int{}
	for _, q := range pub {
		by[string(q.Difficulty)]++
	}
	offers = []certbank.Offer{}
	for _, l := range limits {
		if len(pub) >= l {
			offers = append(offers, certbank.Offer{Limit: l, Difficulty: "any"})
			if smallest == 0 || l < smallest {
				smallest = l
			}
		}
		for _, d := range []string{"easy", "medium", "hard"} {
			if by[d] >= l {
				offers = append(offers, certbank.Offer{Limit: l, Difficulty: d})
			}
		}
	}
	return offers, smallest
}

// checkOffers checks that v is a JSON array of exactly the offers want, in
// order, each with exactly the fields limit and difficulty.
func checkOffers(t *testing.T, where string, v any, want []certbank.Offer) {
	t.Helper()
	items, ok := v.([]any)
	if !ok {
		t.Errorf("%s is %s, want an array", where, jsonType(v))
		return
	}
	got := []certbank.Offer{}
	for i, it := range items {
		o := checkObject(t, fmt.Sprintf("%s[%d]", where, i), it, []field{{"limit", "integer"}, {"difficulty", "string"}})
		d, _ := o["difficulty"].(string)
		got = append(got, certbank.Offer{Limit: num(o["limit"]), Difficulty: d})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %v, want %v", where, got, want)
	}
}

// TestPaidOffers: the catalog, /.well-known/x402.json and the OpenAPI
// description advertise, per certification, exactly the combinations its
// published questions can fill; the catalog's paid_x402 and the feed's x402
// link carry the smallest fillable limit; the hub and the developers page
// say the same. The fixture's six questions per certification fill nothing
// at 10/25/50, so the price list is varied to give some and all.
func TestPaidOffers(t *testing.T) {
	tests := []struct {
		name  string
		sizes []int // nil: the fixture's 10, 25, 50
	}{
		{"nothing fillable", nil},
		{"some fillable", []int{5, 2, 3}},
		{"one size", []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := loadFixture(t)
			if tt.sizes != nil {
				c.Site.Pricing.Entries = nil
				for _, n := range tt.sizes {
					c.Site.Pricing.Entries = append(c.Site.Pricing.Entries, certbank.PriceEntry{Questions: n, Amount: certbank.USDC(1000 * n)})
				}
			}
			out, err := generator.Build(c, generator.Options{Date: fixtureDate})
			if err != nil {
				t.Fatal(err)
			}
			facts := factsOf(c)
			limits := c.Site.Pricing.Limits()
			cat := decodeJSON(t, out.Files, "catalog.json")
			certs, _ := cat["certifications"].([]any)
			disc := decodeJSON(t, out.Files, ".well-known/x402.json")
			res := disc["resources"].([]any)[0].(map[string]any)
			discOffers, _ := res["offers"].([]any)
			api := decodeJSON(t, out.Files, "openapi.json")
			info := api["paths"].(map[string]any)["/api/v1/x402"].(map[string]any)["get"].(map[string]any)["x-payment-info"].(map[string]any)
			apiOffers, _ := info["offers"].([]any)
			if len(certs) != len(c.Certifications) || len(discOffers) != len(c.Certifications) || len(apiOffers) != len(c.Certifications) {
				t.Fatalf("%d catalog entries, %d x402.json offers, %d OpenAPI offers; want %d each", len(certs), len(discOffers), len(apiOffers), len(c.Certifications))
			}
			developers := string(out.Files["developers/index.html"])
			var payable []string // the paid links that answer 402
			for i, cert := range c.Certifications {
				want, smallest := wantOffers(facts.published[cert.Slug], limits)
				unfillable := len(want) < 4*len(limits)
				link := facts.base + "/api/v1/x402?certification=" + cert.Slug
				if smallest > 0 {
					link += "&limit=" + strconv.Itoa(smallest)
					payable = append(payable, link)
				}

				ce := certs[i].(map[string]any)
				checkOffers(t, cert.Slug+" catalog paid_offers", ce["paid_offers"], want)
				if ce["paid_x402"] != link {
					t.Errorf("%s catalog paid_x402 = %v, want %s", cert.Slug, ce["paid_x402"], link)
				}
				if note, _ := ce["paid_offers_note"].(string); (note != "") != unfillable {
					t.Errorf("%s catalog paid_offers_note = %q; want one exactly while some combination cannot be filled", cert.Slug, note)
				}
				feed := decodeJSON(t, out.Files, "api/"+cert.Slug+"/questions-free.json")
				if got := feed["more"].(map[string]any)["x402"]; got != link {
					t.Errorf("%s feed more.x402 = %v, want %s", cert.Slug, got, link)
				}

				for doc, v := range map[string]any{"x402.json offers": discOffers[i], "OpenAPI x-payment-info.offers": apiOffers[i]} {
					o := checkObject(t, cert.Slug+" "+doc, v, []field{{"certification", "string"}, {"offers", "array"}}, field{"note", "string"})
					if o["certification"] != cert.Slug {
						t.Errorf("%s[%d].certification = %v, want %s (catalog order)", doc, i, o["certification"], cert.Slug)
					}
					checkOffers(t, cert.Slug+" "+doc, o["offers"], want)
					if o["note"] != ce["paid_offers_note"] {
						t.Errorf("%s %s note = %v, want the catalog's %v", cert.Slug, doc, o["note"], ce["paid_offers_note"])
					}
				}

				hub := string(out.Files["certifications/"+cert.Slug+"/index.html"])
				if hasLink := strings.Contains(hub, "<code>GET "+strings.ReplaceAll(link, "&", "&amp;")+"</code>"); hasLink != (smallest > 0) {
					t.Errorf("%s hub shows the paid link %s: %v, want %v", cert.Slug, link, hasLink, smallest > 0)
				}
				var cells []string
				for _, l := range limits {
					var ds []string
					for _, o := range want {
						if o.Limit == l {
							ds = append(ds, o.Difficulty)
						}
					}
					cell := strings.Join(ds, ", ")
					if cell == "" {
						cell = "none"
					}
					cells = append(cells, "<td>"+cell+"</td>")
				}
				head := `<tr><th scope="row"><a href="/certifications/` + cert.Slug + `/">`
				_, row, _ := strings.Cut(developers, head)
				row, _, _ = strings.Cut(row, "</tr>")
				if _, cellsGot, _ := strings.Cut(row, "</a></th>"); cellsGot != strings.Join(cells, "") {
					t.Errorf("the developers page's offers row of %s has %q, want %q", cert.Slug, cellsGot, strings.Join(cells, ""))
				}
			}
			// The developers page's example answers 402 whenever some link does.
			example := len(payable) == 0
			for _, link := range payable {
				example = example || strings.Contains(developers, "curl -i '"+strings.ReplaceAll(link, "&", "&amp;")+"'")
			}
			if !example {
				t.Errorf("the developers page's curl example is none of the links that answer 402 %v", payable)
			}
		})
	}
}

// TestOffersSchema: the OpenAPI schemas PaidOffer and CertificationOffers
// describe what the documents carry.
func TestOffersSchema(t *testing.T) {
	_, out := buildFixture(t)
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Required   []string                   `json:"required"`
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(out.Files["openapi.json"], &doc); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{"PaidOffer": {"difficulty", "limit"}, "CertificationOffers": {"certification", "note", "offers"}} {
		s, ok := doc.Components.Schemas[name]
		if !ok {
			t.Errorf("components.schemas.%s is missing", name)
			continue
		}
		var got []string
		for k := range s.Properties {
			got = append(got, k)
		}
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("components.schemas.%s has the properties %v, want %v", name, got, want)
		}
	}
	if p := doc.Components.Schemas["PaidOffer"].Properties["difficulty"]; !strings.Contains(string(p), `"any"`) {
		t.Errorf("PaidOffer.difficulty is %s, want an enum with any", p)
	}
}
