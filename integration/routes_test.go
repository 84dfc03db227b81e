package integration_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall"
	"github.com/certbank/certbank/paywall/paywalltest"
	"github.com/certbank/certbank/paywall/store/memstore"
)

// TestRoutesMatchOpenAPI: the service's route table and the paths of the
// OpenAPI description the build writes are the same set (besides the free
// sample feeds, static files the description documents too, and the
// operators' paths and the server card, which it need not), with the same
// methods, and both are the domain's certbank.APIPaths.
func TestRoutesMatchOpenAPI(t *testing.T) {
	srv, _ := offersSite(t)
	_, api := getJSON(t, srv.URL+"/openapi.json")
	paths, _ := api["paths"].(map[string]any)
	if len(paths) == 0 {
		t.Fatal("openapi.json has no paths")
	}
	documented := map[string][]string{} // path -> methods, upper case
	for p, ops := range paths {
		if p == "/api/{slug}/questions-free.json" || slices.Contains(certbank.OperatorPaths(), p) {
			continue
		}
		for m := range ops.(map[string]any) {
			switch m {
			case "get", "post", "put", "delete", "patch":
				documented[p] = append(documented[p], strings.ToUpper(m))
			}
		}
	}
	svc, err := paywall.New(paywall.Config{Bank: paywalltest.Bank(1), Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	routes := svc.Routes()
	served := map[string][]string{}
	for _, r := range routes {
		if slices.Contains(certbank.OperatorPaths(), r.Path) {
			continue
		}
		served[r.Path] = r.Methods
	}
	var docPaths, servedPaths []string
	for p := range documented {
		docPaths = append(docPaths, p)
	}
	for p := range served {
		servedPaths = append(servedPaths, p)
	}
	want := certbank.APIPaths()
	for _, set := range []*[]string{&docPaths, &servedPaths, &want} {
		slices.Sort(*set)
	}
	if !slices.Equal(docPaths, servedPaths) || !slices.Equal(servedPaths, want) {
		t.Fatalf("paths differ:\nOpenAPI: %q\nroutes:  %q\ndomain:  %q", docPaths, servedPaths, want)
	}
	for p, methods := range documented {
		for _, m := range methods {
			if allowed := served[p]; len(allowed) > 0 && !slices.Contains(allowed, m) {
				t.Errorf("OpenAPI documents %s %s; the route allows only %v", m, p, allowed)
			}
		}
	}
}
