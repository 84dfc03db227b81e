package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
	"github.com/certbank/certbank/generator/synth"
	"github.com/certbank/certbank/paywall"
	"github.com/certbank/certbank/paywall/sqlite"
	"github.com/certbank/certbank/paywall/x402"
)

// Honest offers: the documents the generator builds advertise, per
// certification, the limit × difficulty combinations of the paid route, and
// the service built on the same bank answers 402 for exactly those and 400
// for every other one. The bank is small (30 questions per certification),
// so limit 50 and some difficulties cannot be filled.

// offersSite builds a synthetic site of two certifications × 30 questions
// and serves its public files and the paid route from one in-process
// service. It returns the server and the site's base_url, which the
// documents' links carry.
func offersSite(t *testing.T) (srv *httptest.Server, base string) {
	t.Helper()
	dir := t.TempDir()
	content := filepath.Join(dir, "content")
	if err := synth.Write(content, 2, 30, 7); err != nil {
		t.Fatal(err)
	}
	c, err := generator.Load(os.DirFS(content), content)
	if err != nil {
		t.Fatal(err)
	}
	out, err := generator.Build(c, generator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "offers.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := paywall.New(paywall.Config{Bank: out.Bank, Static: out.Files, Store: db,
		Pay: &paywall.PayConfig{Facilitator: x402.NewLocal(devChain(t)), ReconcileEvery: -1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	srv = httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv, c.Site.BaseURL
}

// getJSON GETs url and decodes its JSON body.
func getJSON(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("GET %s: %d, not JSON: %v\n%s", url, res.StatusCode, err, b)
	}
	return res.StatusCode, v
}

// offersIn decodes a JSON array of offers.
func offersIn(t *testing.T, v any) []certbank.Offer {
	t.Helper()
	b, _ := json.Marshal(v)
	var out []certbank.Offer
	if err := json.Unmarshal(b, &out); err != nil || out == nil {
		t.Fatalf("offers %s: want an array of {limit, difficulty}: %v", b, err)
	}
	return out
}

func TestOffersAnswer402(t *testing.T) {
	srv, base := offersSite(t)
	local := func(u string) string { return srv.URL + strings.TrimPrefix(u, base) }

	// What the built documents advertise, read from the service.
	_, cat := getJSON(t, srv.URL+"/catalog.json")
	_, disc := getJSON(t, srv.URL+"/.well-known/x402.json")
	_, api := getJSON(t, srv.URL+"/openapi.json")
	discOffers := disc["resources"].([]any)[0].(map[string]any)["offers"].([]any)
	apiOffers := api["paths"].(map[string]any)["/api/v1/x402"].(map[string]any)["get"].(map[string]any)["x-payment-info"].(map[string]any)["offers"].([]any)

	type combo struct {
		slug       string
		limit      int
		difficulty string // "any": no difficulty parameter
		advertised bool
	}
	var combos []combo
	var links []struct{ what, url string }
	certs := cat["certifications"].([]any)
	for i, v := range certs {
		ce := v.(map[string]any)
		slug := ce["slug"].(string)
		offers := offersIn(t, ce["paid_offers"])
		for doc, d := range map[string]any{"x402.json": discOffers[i], "openapi.json": apiOffers[i]} {
			o := d.(map[string]any)
			if o["certification"] != slug || !reflect.DeepEqual(offersIn(t, o["offers"]), offers) {
				t.Errorf("%s offers of %v differ from the catalog's paid_offers of %s %v", doc, o["certification"], slug, offers)
			}
		}
		_, feed := getJSON(t, srv.URL+"/api/"+slug+"/questions-free.json")
		links = append(links, struct{ what, url string }{"catalog paid_x402 of " + slug, ce["paid_x402"].(string)},
			struct{ what, url string }{"feed more.x402 of " + slug, feed["more"].(map[string]any)["x402"].(string)})
		advertised := map[certbank.Offer]bool{}
		for _, o := range offers {
			advertised[o] = true
		}
		for _, l := range []int{10, 25, 50} {
			for _, d := range []string{"any", "easy", "medium", "hard"} {
				combos = append(combos, combo{slug, l, d, advertised[certbank.Offer{Limit: l, Difficulty: d}]})
			}
		}
	}
	yes, no, filtered := 0, 0, 0
	for _, c := range combos {
		if c.advertised {
			yes++
			if c.difficulty != "any" {
				filtered++
			}
		} else {
			no++
		}
	}
	if yes == 0 || no == 0 || filtered == 0 {
		t.Fatalf("the bank gives %d advertised (%d with a difficulty) and %d unadvertised combinations; the test needs some of each", yes, filtered, no)
	}

	for _, c := range combos {
		name := fmt.Sprintf("%s limit=%d difficulty=%s", c.slug, c.limit, c.difficulty)
		t.Run(name, func(t *testing.T) {
			q := fmt.Sprintf("/api/v1/x402?certification=%s&limit=%d", c.slug, c.limit)
			if c.difficulty != "any" {
				q += "&difficulty=" + c.difficulty
			}
			status, body := getJSON(t, srv.URL+q)
			switch {
			case c.advertised && status != http.StatusPaymentRequired:
				t.Errorf("advertised, but answers %d %v; want 402", status, body)
			case !c.advertised && (status != http.StatusBadRequest || body["code"] != "INVALID_PARAMS"):
				t.Errorf("not advertised, but answers %d %v; want 400 INVALID_PARAMS", status, body)
			case !c.advertised:
				msg, _ := body["error"].(string)
				if !strings.Contains(msg, c.slug+" can fill limit 10") || !strings.Contains(msg, "nothing was charged") {
					t.Errorf("the 400 says %q; want it to name what %s can fill and that nothing was charged", msg, c.slug)
				}
			}
		})
	}

	// Following the catalog's paid_x402 and the feed's x402 link pays.
	for _, l := range links {
		link := l.url
		t.Run(l.what, func(t *testing.T) {
			if !strings.Contains(link, "&limit=") {
				t.Fatalf("%s carries no limit", link)
			}
			if status, body := getJSON(t, local(link)); status != http.StatusPaymentRequired {
				t.Errorf("GET %s answers %d %v; want 402", link, status, body)
			}
		})
	}
}
