package paywall

// The keyed routes: questions, certifications, usage and the export, over
// the draw service.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/draw"
	"github.com/certbank/certbank/paywall/store"
)

type questionsMeta struct {
	TotalAvailable  int         `json:"total_available"`
	Returned        int         `json:"returned"`
	Limit           int         `json:"limit"`
	Random          bool        `json:"random"`
	UniqueQuestions draw.Unique `json:"unique_questions"`
	Page            int         `json:"page,omitempty"`
	NextCursor      string      `json:"next_cursor,omitempty"`
	Note            string      `json:"note,omitempty"`
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

// handleQuestions serves GET /api/v1/questions and
// /functions/v1/api-v1-questions: it reads the query, and the draw
// service checks the filters, picks and accounts.
func (s *Server) handleQuestions(w http.ResponseWriter, r *http.Request) error {
	// Tell the accountant this request is coming, so the group commit
	// waits for it instead of committing a batch without it.
	ar := s.draw.Arrive()
	defer ar.Leave()
	p, err := newParams(r, "certification", "difficulty", "domain", "limit", "random", "include_answer", "page", "cursor")
	if err != nil {
		return err
	}
	f, _, err := s.draw.Filter(p.str("certification"), p.str("difficulty"), p.str("domain"), false)
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
	tier, _ := s.draw.Tier(k, s.now())
	limit, err := p.integer("limit", min(10, tier.MaxLimit), 1, tier.MaxLimit)
	if err != nil {
		return certbank.Errorf(certbank.Invalid, "limit must be a whole number from 1 to %d (the %s tier's maximum), not %q", tier.MaxLimit, tier.Title, p.str("limit"))
	}
	q := draw.Query{Key: &k, Filter: f, Count: limit, Arrival: &ar}
	meta := questionsMeta{Limit: limit, Random: random}
	if !random {
		q.Sequential = true
		if q.Page, q.After, err = pageParams(p); err != nil {
			return err
		}
		meta.Page = q.Page
	}
	res, err := s.draw.Draw(r.Context(), q)
	setRateHeaders(w, res.Tier, res.Usage, res.Now)
	if err != nil {
		return err
	}
	tier = res.Tier
	meta.TotalAvailable = res.Total
	if res.NextAfter != "" {
		meta.NextCursor = encodeCursor(res.NextAfter)
	}
	meta.Returned = len(res.Picked)
	meta.UniqueQuestions = res.Unique
	if meta.Returned < limit && meta.UniqueQuestions.Remaining == 0 && tier.UniqueQuestions != certbank.Unlimited && res.Total > meta.Returned {
		meta.Note = fmt.Sprintf("this key has reached the %s tier's limit of %d unique questions, so only questions it has already seen are served; upgrade the key's tier for more", tier.Title, tier.UniqueQuestions)
	}
	bp := bodyPool.Get().(*[]byte)
	defer bodyPool.Put(bp)
	b := append((*bp)[:0], `{"data":[`...)
	for i, e := range res.Picked {
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
	tier, _ := s.draw.Tier(k, s.now())
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
	u, tier, now, err := s.draw.Usage(r.Context(), k)
	if err != nil {
		return err
	}
	_, until := s.draw.Tier(k, now)
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
		"unique_questions":     s.draw.UniqueOf(tier, u.SeenCount),
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
	ar := s.draw.Arrive()
	defer ar.Leave()
	p, err := newParams(r, "certification", "include_answer")
	if err != nil {
		return err
	}
	cert, err := s.draw.Cert(p.str("certification"), true)
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
	res, err := s.draw.Export(r.Context(), k, cert.Slug, &ar)
	setRateHeaders(w, res.Tier, res.Usage, res.Now)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.ndjson"`, cert.Slug))
	w.Header().Set("Cache-Control", "no-store")
	bp := bodyPool.Get().(*[]byte)
	defer bodyPool.Put(bp)
	b := (*bp)[:0]
	for _, e := range res.Picked {
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
