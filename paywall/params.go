package paywall

// The query parameters of the keyed and paid routes, read strictly.

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/certbank/certbank"
)

// params reads query parameters strictly: unknown names and repeated
// values are errors that name the parameter and what is allowed.
type params struct {
	q       url.Values
	allowed []string
}

func newParams(r *http.Request, allowed ...string) (*params, error) {
	q := r.URL.Query()
	for name, vs := range q {
		if !slices.Contains(allowed, name) {
			return nil, certbank.Errorf(certbank.Invalid, "unknown parameter %q; allowed parameters are %s", name, strings.Join(allowed, ", "))
		}
		if len(vs) > 1 {
			return nil, certbank.Errorf(certbank.Invalid, "parameter %q is given %d times; give it once", name, len(vs))
		}
	}
	return &params{q: q, allowed: allowed}, nil
}

func (p *params) str(name string) string { return strings.TrimSpace(p.q.Get(name)) }

func (p *params) has(name string) bool { return p.q.Has(name) }

func (p *params) boolean(name string, def bool) (bool, error) {
	if !p.q.Has(name) {
		return def, nil
	}
	switch strings.ToLower(p.str(name)) {
	case "true", "1", "yes":
		return true, nil
	case "false", "0", "no":
		return false, nil
	}
	return false, certbank.Errorf(certbank.Invalid, "%s must be true or false, not %q", name, p.str(name))
}

func (p *params) integer(name string, def, lo, hi int) (int, error) {
	if !p.q.Has(name) {
		return def, nil
	}
	v, err := strconv.Atoi(p.str(name))
	if err != nil || v < lo || v > hi {
		return 0, certbank.Errorf(certbank.Invalid, "%s must be a whole number from %d to %d, not %q", name, lo, hi, p.str(name))
	}
	return v, nil
}

func (s *Server) randomParam(p *params) (bool, error) {
	random, err := p.boolean("random", true)
	if err != nil {
		return false, err
	}
	if random && (p.has("page") || p.has("cursor")) {
		return false, certbank.Errorf(certbank.Invalid, "page and cursor need random=false")
	}
	return random, nil
}

func encodeCursor(lastID string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("after:" + lastID))
}

// pageParams returns the page asked for by page, or the id after which
// the page asked for by cursor starts.
func pageParams(p *params) (page int, after string, err error) {
	if p.has("page") && p.has("cursor") {
		return 0, "", certbank.Errorf(certbank.Invalid, "give page or cursor, not both")
	}
	if c := p.str("cursor"); c != "" {
		raw, err := base64.RawURLEncoding.DecodeString(c)
		id, ok := strings.CutPrefix(string(raw), "after:")
		if err != nil || !ok || id == "" {
			return 0, "", certbank.Errorf(certbank.Invalid, "cursor %q is not one this API issued; use meta.next_cursor of the previous page", c)
		}
		return 0, id, nil
	}
	page, err = p.integer("page", 1, 1, 1<<30)
	return page, "", err
}
