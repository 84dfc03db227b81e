package paywall

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/mail"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/bank"
	"github.com/certbank/certbank/paywall/store"
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

func (s *Server) certParam(p *params, required bool) (*certbank.Certification, error) {
	slug := p.str("certification")
	if slug == "" {
		if required {
			return nil, certbank.Errorf(certbank.Invalid, "certification is required: one of %s", s.slugList())
		}
		return nil, nil
	}
	c, ok := s.ix.Cert(slug)
	if !ok {
		return nil, certbank.Errorf(certbank.Invalid, "unknown certification %q; use one of %s", slug, s.slugList())
	}
	return c, nil
}

func (s *Server) slugList() string {
	slugs := make([]string, len(s.ix.Certs()))
	for i, c := range s.ix.Certs() {
		slugs[i] = c.Slug
	}
	return strings.Join(slugs, ", ")
}

func difficultyParam(p *params) (certbank.Difficulty, error) {
	d := p.str("difficulty")
	if d == "" {
		return "", nil
	}
	return certbank.ParseDifficulty(strings.ToLower(d))
}

func domainParam(p *params, c *certbank.Certification) (string, error) {
	d := p.str("domain")
	if d == "" || c == nil {
		return d, nil
	}
	for _, dom := range c.Domains {
		if strings.EqualFold(dom.Name, d) {
			return dom.Name, nil
		}
	}
	names := make([]string, len(c.Domains))
	for i, dom := range c.Domains {
		names[i] = strconv.Quote(dom.Name)
	}
	return "", certbank.Errorf(certbank.Invalid, "domain %q is not a domain of %s; use one of %s", d, c.Slug, strings.Join(names, ", "))
}

type uniqueMeta struct {
	Limit     int `json:"limit"`
	Used      int `json:"used"`
	Remaining int `json:"remaining"`
}

type questionsMeta struct {
	TotalAvailable  int        `json:"total_available"`
	Returned        int        `json:"returned"`
	Limit           int        `json:"limit"`
	Random          bool       `json:"random"`
	UniqueQuestions uniqueMeta `json:"unique_questions"`
	Page            int        `json:"page,omitempty"`
	NextCursor      string     `json:"next_cursor,omitempty"`
	Note            string     `json:"note,omitempty"`
}

func (s *Server) uniqueOf(t certbank.Tier, seenCount int) uniqueMeta {
	limit := t.UniqueQuestions
	if limit == certbank.Unlimited {
		limit = len(s.ix.All())
	}
	return uniqueMeta{Limit: limit, Used: seenCount, Remaining: max(limit-seenCount, 0)}
}

func setRateHeaders(w http.ResponseWriter, t certbank.Tier, u store.Usage, now time.Time) {
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(t.PerMinute))
	used := u.MinuteCount
	if !u.MinuteStart.Equal(certbank.MinuteStart(now)) {
		used = 0
	}
	h.Set("RateLimit-Remaining", strconv.Itoa(max(t.PerMinute-used, 0)))
	h.Set("RateLimit-Reset", strconv.Itoa(int(certbank.MinuteStart(now).Add(time.Minute).Sub(now).Seconds()+0.999)))
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// handleQuestions serves GET /api/v1/questions and
// /functions/v1/api-v1-questions.
func (s *Server) handleQuestions(w http.ResponseWriter, r *http.Request) error {
	// Tell the accountant this request is coming, so the group commit
	// waits for it instead of committing a batch without it.
	arrived := !s.cfg.AccountingOff
	if arrived {
		s.acct.arrive()
		defer func() {
			if arrived {
				s.acct.leave()
			}
		}()
	}
	p, err := newParams(r, "certification", "difficulty", "domain", "limit", "random", "include_answer", "page", "cursor")
	if err != nil {
		return err
	}
	cert, err := s.certParam(p, false)
	if err != nil {
		return err
	}
	diff, err := difficultyParam(p)
	if err != nil {
		return err
	}
	domain, err := domainParam(p, cert)
	if err != nil {
		return err
	}
	random, err := s.randomParam(p)
	if err != nil {
		return err
	}
	include, err := p.boolean("include_answer", false)
	if err != nil {
		return err
	}
	k, err := s.authenticate(r.Context(), r)
	if err != nil {
		return err
	}
	now := s.now()
	tier, _ := s.effectiveTier(k, now)
	limit, err := p.integer("limit", min(10, tier.MaxLimit), 1, tier.MaxLimit)
	if err != nil {
		return certbank.Errorf(certbank.Invalid, "limit must be a whole number from 1 to %d (the %s tier's maximum), not %q", tier.MaxLimit, tier.Title, p.str("limit"))
	}
	f := bank.Filter{Difficulty: diff, Domain: domain}
	if cert != nil {
		f.Cert = cert.Slug
	}
	cands := s.ix.Matching(f, nil)
	meta := questionsMeta{TotalAvailable: len(cands), Limit: limit, Random: random}
	var pick bank.Picker
	if random {
		pick = bank.PickRandom(cands, limit)
	} else {
		if !tier.Pagination {
			return certbank.Errorf(certbank.TierRequired, "sequential pagination (random=false) needs the Enterprise tier; your key is on the %s tier", tier.Title)
		}
		offset, page, err := pageParams(p, cands, limit)
		if err != nil {
			return err
		}
		meta.Page = page
		pick = bank.PickPage(cands, offset, limit)
		if offset+limit < len(cands) {
			meta.NextCursor = encodeCursor(cands[min(offset+limit, len(cands))-1].Q.ID)
		}
	}
	picked, u, err := s.spendArrived(r, k, tier, now, pick, &arrived)
	if err != nil {
		setRateHeaders(w, tier, u, now)
		return err
	}
	setRateHeaders(w, tier, u, now)
	meta.Returned = len(picked)
	meta.UniqueQuestions = s.uniqueOf(tier, u.SeenCount)
	if meta.Returned < limit && meta.UniqueQuestions.Remaining == 0 && tier.UniqueQuestions != certbank.Unlimited && len(cands) > meta.Returned {
		meta.Note = fmt.Sprintf("this key has reached the %s tier's limit of %d unique questions, so only questions it has already seen are served; upgrade the key's tier for more", tier.Title, tier.UniqueQuestions)
	}
	bp := bodyPool.Get().(*[]byte)
	defer bodyPool.Put(bp)
	b := append((*bp)[:0], `{"data":[`...)
	for i, e := range picked {
		if i > 0 {
			b = append(b, ',')
		}
		b = e.AppendKeyed(b, include)
	}
	b = append(b, `],"meta":`...)
	mb, _ := json.Marshal(meta)
	b = append(b, mb...)
	b = append(b, "}\n"...)
	if cap(b) <= 1<<20 { // keep buffers of ordinary responses for reuse
		*bp = b
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
	return nil
}

// bodyPool holds response buffers of the questions endpoint.
var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// spend accounts one request of key k (unless accounting is off) and
// returns the questions picked for it.
func (s *Server) spend(r *http.Request, k store.Key, tier certbank.Tier, now time.Time, pick bank.Picker) ([]*bank.Entry, store.Usage, error) {
	return s.spendArrived(r, k, tier, now, pick, nil)
}

// spendArrived is spend for a handler that called s.acct.arrive; arrived
// is its flag, cleared when the request is queued.
func (s *Server) spendArrived(r *http.Request, k store.Key, tier certbank.Tier, now time.Time, pick bank.Picker, arrived *bool) ([]*bank.Entry, store.Usage, error) {
	if s.cfg.AccountingOff {
		return pick(seen{}, certbank.Unlimited), store.Usage{}, nil
	}
	sp := &spend{keyID: k.ID, tier: tier, now: now, pick: pick, count: true, arrived: arrived}
	if err := s.acct.do(r.Context(), sp); err != nil {
		return nil, sp.usage, err
	}
	return sp.picked, sp.usage, nil
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

// pageParams returns the offset of the page asked for by page or cursor.
func pageParams(p *params, cands []*bank.Entry, limit int) (offset, page int, err error) {
	if p.has("page") && p.has("cursor") {
		return 0, 0, certbank.Errorf(certbank.Invalid, "give page or cursor, not both")
	}
	if c := p.str("cursor"); c != "" {
		raw, err := base64.RawURLEncoding.DecodeString(c)
		id, ok := strings.CutPrefix(string(raw), "after:")
		if err != nil || !ok {
			return 0, 0, certbank.Errorf(certbank.Invalid, "cursor %q is not one this API issued; use meta.next_cursor of the previous page", c)
		}
		i := sort.Search(len(cands), func(i int) bool { return cands[i].Q.ID > id })
		return i, 0, nil
	}
	page, err = p.integer("page", 1, 1, 1<<30)
	if err != nil {
		return 0, 0, err
	}
	return (page - 1) * limit, page, nil
}

type certEntry struct {
	Slug       string         `json:"slug"`
	Name       string         `json:"name"`
	Provider   string         `json:"provider"`
	ExamCode   string         `json:"exam_code,omitempty"`
	ExamStatus string         `json:"exam_status"`
	ExamNote   string         `json:"exam_note,omitempty"`
	Retirement string         `json:"retirement_date,omitempty"`
	Successor  string         `json:"successor,omitempty"`
	Questions  int            `json:"questions"`
	Difficulty map[string]int `json:"difficulty"`
	Domains    []domainEntry  `json:"domains"`
}

type domainEntry struct {
	Name      string `json:"name"`
	Weight    int    `json:"weight"`
	Questions int    `json:"questions"`
}

func (s *Server) certEntries(provider string) []certEntry {
	out := []certEntry{}
	for i := range s.ix.Certs() {
		c := &s.ix.Certs()[i]
		if provider != "" && !strings.EqualFold(provider, c.Provider) {
			continue
		}
		e := certEntry{Slug: c.Slug, Name: c.Name, Provider: c.Provider, ExamCode: c.ExamCode, ExamStatus: string(c.Status),
			Difficulty: map[string]int{"easy": 0, "medium": 0, "hard": 0}}
		if c.Status == certbank.Retiring {
			e.ExamNote, e.Retirement, e.Successor = c.ExamNote, c.RetirementDate, c.Successor
		}
		byDomain := map[string]int{}
		for _, q := range s.ix.ByCert(c.Slug) {
			e.Questions++
			e.Difficulty[string(q.Q.Difficulty)]++
			byDomain[q.Q.Domain]++
		}
		for _, d := range c.Domains {
			e.Domains = append(e.Domains, domainEntry{d.Name, d.Weight, byDomain[d.Name]})
		}
		out = append(out, e)
	}
	return out
}

// handleCertifications serves GET /api/v1/certifications and
// /functions/v1/api-v1-certifications.
func (s *Server) handleCertifications(w http.ResponseWriter, r *http.Request) error {
	p, err := newParams(r, "provider")
	if err != nil {
		return err
	}
	prov := p.str("provider")
	if prov != "" {
		found := false
		for _, x := range s.ix.Providers() {
			found = found || strings.EqualFold(x, prov)
		}
		if !found {
			return certbank.Errorf(certbank.Invalid, "unknown provider %q; use one of %s", prov, strings.Join(s.ix.Providers(), ", "))
		}
	}
	k, err := s.authenticate(r.Context(), r)
	if err != nil {
		return err
	}
	tier, _ := s.effectiveTier(k, s.now())
	data := s.certEntries(prov)
	total := 0
	for _, c := range data {
		total += c.Questions
	}
	setRateHeaders(w, tier, store.Usage{}, s.now())
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "meta": map[string]int{"total": len(data), "total_questions": total}})
	return nil
}

type windowUsage struct {
	Limit     *int   `json:"limit"`
	Used      int    `json:"used"`
	Remaining *int   `json:"remaining"`
	ResetsAt  string `json:"resets_at"`
}

func window(limit, used int, reset time.Time) windowUsage {
	w := windowUsage{Used: used, ResetsAt: reset.UTC().Format(time.RFC3339)}
	if limit != certbank.Unlimited {
		rem := max(limit-used, 0)
		w.Limit, w.Remaining = &limit, &rem
	}
	return w
}

// handleUsage serves GET /api/v1/usage and /functions/v1/api-v1-usage.
func (s *Server) handleUsage(w http.ResponseWriter, r *http.Request) error {
	if _, err := newParams(r); err != nil {
		return err
	}
	k, err := s.authenticate(r.Context(), r)
	if err != nil {
		return err
	}
	now := s.now()
	tier, until := s.effectiveTier(k, now)
	sp := &spend{keyID: k.ID, tier: tier, now: now, count: false}
	if err := s.acct.do(r.Context(), sp); err != nil {
		return err
	}
	u := sp.usage
	setRateHeaders(w, tier, u, now)
	var untilStr *string
	if !until.IsZero() {
		v := until.UTC().Format(time.RFC3339)
		untilStr = &v
	}
	minuteUsed := u.MinuteCount
	if !u.MinuteStart.Equal(certbank.MinuteStart(now)) {
		minuteUsed = 0
	}
	body := map[string]any{
		"key": map[string]string{"id": k.ID, "prefix": k.Prefix, "created_at": k.CreatedAt.UTC().Format(time.RFC3339)},
		"tier": map[string]any{"name": tier.Name, "title": tier.Title, "until": untilStr, "max_limit": tier.MaxLimit,
			"pagination": tier.Pagination, "bulk_export": tier.BulkExport},
		"requests": map[string]any{
			"minute": window(tier.PerMinute, minuteUsed, certbank.MinuteStart(now).Add(time.Minute)),
			"month":  window(tier.PerMonth, u.MonthRequests, certbank.MonthStart(now).AddDate(0, 1, 0)),
		},
		"questions_this_month": u.MonthQuestions,
		"unique_questions":     s.uniqueOf(tier, u.SeenCount),
	}
	if k.Tier != tier.Name {
		body["note"] = fmt.Sprintf("the key's %s subscription has ended; it is served as %s", k.Tier, tier.Title)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, body)
	return nil
}

// handleExport streams one certification as NDJSON (Enterprise).
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request) error {
	p, err := newParams(r, "certification", "include_answer")
	if err != nil {
		return err
	}
	cert, err := s.certParam(p, true)
	if err != nil {
		return err
	}
	include, err := p.boolean("include_answer", false)
	if err != nil {
		return err
	}
	k, err := s.authenticate(r.Context(), r)
	if err != nil {
		return err
	}
	now := s.now()
	tier, _ := s.effectiveTier(k, now)
	if !tier.BulkExport {
		return certbank.Errorf(certbank.TierRequired, "bulk export needs the Enterprise tier; your key is on the %s tier", tier.Title)
	}
	cands := s.ix.ByCert(cert.Slug)
	picked, u, err := s.spend(r, k, tier, now, bank.PickPage(cands, 0, len(cands)))
	setRateHeaders(w, tier, u, now)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.ndjson"`, cert.Slug))
	w.Header().Set("Cache-Control", "no-store")
	bp := bodyPool.Get().(*[]byte)
	defer bodyPool.Put(bp)
	b := (*bp)[:0]
	for _, e := range picked {
		b = append(e.AppendKeyed(b, include), '\n')
		if len(b) >= 32<<10 {
			if _, err := w.Write(b); err != nil {
				return nil // the client went away; its usage is already counted
			}
			b = b[:0]
		}
	}
	w.Write(b)
	if cap(b) <= 1<<20 {
		*bp = b
	}
	return nil
}

type signupRequest struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// Signup limits.
const (
	maxSignupBody       = 4 << 10
	signupsPerHourPerIP = 5
)

// handleSignup serves POST /api/v1/signup.
func (s *Server) handleSignup(w http.ResponseWriter, r *http.Request) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return certbank.Errorf(certbank.Invalid, "send the body as JSON with Content-Type: application/json")
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSignupBody))
	dec.DisallowUnknownFields()
	var req signupRequest
	if err := dec.Decode(&req); err != nil {
		return certbank.Errorf(certbank.Invalid, "the body must be a JSON object {\"name\": \"…\", \"email\": \"…\"} of at most %d bytes: %v", maxSignupBody, err)
	}
	if dec.More() {
		return certbank.Errorf(certbank.Invalid, "the body must hold one JSON object")
	}
	name := strings.TrimSpace(req.Name)
	if name == "" || utf8.RuneCountInString(name) > 100 || strings.ContainsAny(name, "\x00\r\n") {
		return certbank.Errorf(certbank.Invalid, "name is required: 1 to 100 characters on one line")
	}
	email := strings.ToLower(strings.TrimSpace(req.Email))
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Address != email || len(email) > 254 || !strings.Contains(email[strings.LastIndex(email, "@")+1:], ".") {
		return certbank.Errorf(certbank.Invalid, "email %q is not a valid address like ada@example.com", req.Email)
	}
	now := s.now()
	n, err := s.store.Hit(r.Context(), "signup:"+s.clientAddr(r), now.UTC().Truncate(time.Hour))
	if err != nil {
		return err
	}
	if n > signupsPerHourPerIP {
		next := now.UTC().Truncate(time.Hour).Add(time.Hour)
		return &limitError{certbank.Errorf(certbank.RateLimited, "too many signups from this address; try again after %s", next.Format(time.RFC3339)), next.Sub(now)}
	}
	key, hash, prefix := NewAPIKey()
	free, _ := s.cfg.Bank.Site.Tier(certbank.TierFree)
	k := store.Key{ID: NewKeyID(), Hash: hash, Prefix: prefix, Name: name, Email: email, Tier: free.Name, CreatedAt: now.UTC()}
	if err := s.store.CreateKey(r.Context(), k); err != nil {
		if certbank.ErrorCode(err) == certbank.Conflict {
			return certbank.Errorf(certbank.Conflict, "%s already has an active API key; a lost key is replaced by support (%s)", email, s.cfg.Bank.Site.Contact)
		}
		return err
	}
	s.log.Info("signup", "id", requestID(r.Context()), "key_id", k.ID)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, map[string]any{
		"api_key": key,
		"key_id":  k.ID,
		"prefix":  prefix,
		"tier":    free.Name,
		"limits": map[string]any{
			"requests_per_minute": free.PerMinute,
			"requests_per_month":  nullableLimit(free.PerMonth),
			"unique_questions":    nullableLimit(free.UniqueQuestions),
			"max_limit":           free.MaxLimit,
		},
		"message": "Store this key now: it is shown only once and cannot be recovered. Send it in the x-api-key header.",
	})
	return nil
}

func nullableLimit(n int) *int {
	if n == certbank.Unlimited {
		return nil
	}
	return &n
}
