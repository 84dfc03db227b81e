// Package draw is the one draw service behind the keyed REST route
// (GET /api/v1/questions, /functions/v1/api-v1-questions, the export) and
// the MCP tools (get_practice_questions, check_answer): it checks the
// filters, picks the questions and accounts the request under the key's
// tier. The doors differ only in how they read arguments and write
// answers. It knows no HTTP.
package draw

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/bank"
	"github.com/certbank/certbank/paywall/quota"
	"github.com/certbank/certbank/paywall/store"
)

// Accountant records a request's usage under its key's limits
// (quota.Accountant, or quota.Noop for the benchmark baseline).
type Accountant interface {
	Arrive() quota.Arrival
	Do(ctx context.Context, s *quota.Spend) error
}

// FreeMax is how many questions a draw without a key may ask for.
const FreeMax = 10

// Service draws questions from one bank.
type Service struct {
	ix   *bank.Index
	acct Accountant
	now  func() time.Time
}

// New returns the service over ix, accounting with acct.
func New(ix *bank.Index, acct Accountant, now func() time.Time) *Service {
	return &Service{ix: ix, acct: acct, now: now}
}

// Index returns the bank the service draws from.
func (s *Service) Index() *bank.Index { return s.ix }

// Arrive announces a request that will draw (see quota.Arrival).
func (s *Service) Arrive() quota.Arrival { return s.acct.Arrive() }

// Tier returns the tier k is served with now and the end of its
// subscription (zero: none).
func (s *Service) Tier(k store.Key, now time.Time) (certbank.Tier, time.Time) {
	return quota.EffectiveTier(&s.ix.Bank().Site, k, now)
}

// FilterError is a filter argument outside what the bank has: Param is
// "certification", "difficulty" or "domain", Value what was given, and
// Allowed what may be given. Its message is the REST route's; other doors
// may word it their way from the fields. Its kind is Invalid.
type FilterError struct {
	Param, Value string
	Cert         string // for a domain: the certification's slug
	Allowed      []string
	err          *certbank.Error
}

func (e *FilterError) Error() string { return e.err.Message }
func (e *FilterError) Unwrap() error { return e.err }

func (s *Service) slugs() []string {
	out := make([]string, 0, len(s.ix.Certs()))
	for _, c := range s.ix.Certs() {
		out = append(out, c.Slug)
	}
	return out
}

// Cert checks a certification slug ("" gives nil unless required).
func (s *Service) Cert(slug string, required bool) (*certbank.Certification, error) {
	if slug == "" {
		if !required {
			return nil, nil
		}
		e := &FilterError{Param: "certification", Allowed: s.slugs()}
		e.err = certbank.Errorf(certbank.Invalid, "certification is required: one of %s", strings.Join(e.Allowed, ", "))
		return nil, e
	}
	c, ok := s.ix.Cert(slug)
	if !ok {
		e := &FilterError{Param: "certification", Value: slug, Allowed: s.slugs()}
		e.err = certbank.Errorf(certbank.Invalid, "unknown certification %q; use one of %s", slug, strings.Join(e.Allowed, ", "))
		return nil, e
	}
	return c, nil
}

// Filter checks a draw's filters: a certification (required or not), a
// difficulty and a domain of that certification (case-insensitive; "" for
// any), and returns the selection.
func (s *Service) Filter(slug, difficulty, domain string, certRequired bool) (bank.Filter, *certbank.Certification, error) {
	c, err := s.Cert(slug, certRequired)
	if err != nil {
		return bank.Filter{}, nil, err
	}
	var f bank.Filter
	if c != nil {
		f.Cert = c.Slug
	}
	if difficulty != "" {
		d, err := certbank.ParseDifficulty(strings.ToLower(difficulty))
		if err != nil {
			e := &FilterError{Param: "difficulty", Value: difficulty, Allowed: []string{"easy", "medium", "hard"}}
			e.err = certbank.Errorf(certbank.Invalid, "%s", err.Error())
			if ce, ok := err.(*certbank.Error); ok {
				e.err = ce
			}
			return f, c, e
		}
		f.Difficulty = d
	}
	if domain != "" && c != nil {
		for _, dom := range c.Domains {
			if strings.EqualFold(dom.Name, domain) {
				f.Domain = dom.Name
			}
		}
		if f.Domain == "" {
			e := &FilterError{Param: "domain", Value: domain, Cert: c.Slug}
			quoted := make([]string, len(c.Domains))
			for i, dom := range c.Domains {
				e.Allowed = append(e.Allowed, dom.Name)
				quoted[i] = strconv.Quote(dom.Name)
			}
			e.err = certbank.Errorf(certbank.Invalid, "domain %q is not a domain of %s; use one of %s", domain, c.Slug, strings.Join(quoted, ", "))
			return f, c, e
		}
	} else {
		f.Domain = domain
	}
	return f, c, nil
}

// MaxCount is the most questions one draw may ask for: FreeMax without a
// key, the tier's maximum with one.
func MaxCount(keyed bool, tier certbank.Tier) int {
	if !keyed {
		return FreeMax
	}
	return tier.MaxLimit
}

// Query is one draw.
type Query struct {
	// Key is the requesting key; nil draws from the free samples only and
	// accounts nothing.
	Key    *store.Key
	Filter bank.Filter
	Count  int
	// Sequential takes a page of the matching questions in their stable
	// order (the tier must allow pagination) instead of a random draw:
	// page Page (from 1), or the page after question id After.
	Sequential bool
	Page       int
	After      string
	// Arrival, if set, is the request's announcement (Arrive).
	Arrival *quota.Arrival
}

// Unique is a key's unique-question allowance.
type Unique struct {
	Limit     int `json:"limit"`
	Used      int `json:"used"`
	Remaining int `json:"remaining"`
}

// Result is a draw's outcome.
type Result struct {
	Tier   certbank.Tier
	Now    time.Time
	Source string // "bank", or "free_sample" without a key
	// Total is how many questions match the filter; Picked those drawn.
	Total  int
	Picked []*bank.Entry
	// NextAfter is the id to continue a sequential draw after ("": no
	// more).
	NextAfter string
	// Usage is the key's usage after the draw (zero without a key) and
	// Unique its unique-question allowance.
	Usage  store.Usage
	Unique Unique
}

// UniqueOf is tier's unique-question allowance after seenCount questions
// (an unlimited tier counts against the bank's size).
func (s *Service) UniqueOf(t certbank.Tier, seenCount int) Unique {
	limit := t.UniqueQuestions
	if limit == certbank.Unlimited {
		limit = s.ix.Len()
	}
	return Unique{Limit: limit, Used: seenCount, Remaining: max(limit-seenCount, 0)}
}

// Draw checks q's count against the key's tier, picks the questions and
// accounts them. Its errors: Invalid for a count out of range, TierRequired
// for a sequential draw without pagination, a *quota.LimitError for a
// limit reached, Unavailable when usage could not be recorded. A result is
// returned with the tier and usage known so far even on error.
func (s *Service) Draw(ctx context.Context, q Query) (Result, error) {
	res := Result{Now: s.now(), Picked: []*bank.Entry{}}
	if q.Key == nil {
		if q.Count < 1 || q.Count > FreeMax {
			return res, certbank.Errorf(certbank.Invalid, "count must be from 1 to %d without an API key", FreeMax)
		}
		cands := s.ix.Matching(q.Filter, s.ix.Samples(q.Filter.Cert))
		res.Source, res.Total = "free_sample", len(cands)
		res.Picked = bank.Choose(cands, q.Count, nil)
		return res, nil
	}
	tier, _ := s.Tier(*q.Key, res.Now)
	res.Tier, res.Source = tier, "bank"
	if q.Count < 1 || q.Count > tier.MaxLimit {
		return res, certbank.Errorf(certbank.Invalid, "count must be from 1 to %d on the %s tier", tier.MaxLimit, tier.Title)
	}
	cands := s.ix.Matching(q.Filter, nil)
	res.Total = len(cands)
	pick := bank.PickRandom(cands, q.Count)
	if q.Sequential {
		if !tier.Pagination {
			return res, certbank.Errorf(certbank.TierRequired, "sequential pagination (random=false) needs the Enterprise tier; your key is on the %s tier", tier.Title)
		}
		offset := (max(q.Page, 1) - 1) * q.Count
		if q.After != "" {
			offset, _ = slices.BinarySearchFunc(cands, q.After, func(e *bank.Entry, id string) int { return strings.Compare(e.Q.ID, id) })
			if offset < len(cands) && cands[offset].Q.ID == q.After {
				offset++
			}
		}
		pick = bank.PickPage(cands, offset, q.Count)
		if offset+q.Count < len(cands) {
			res.NextAfter = cands[offset+q.Count-1].Q.ID
		}
	}
	return res, s.account(ctx, q.Key, q.Arrival, pick, &res)
}

// Export accounts a bulk export of one certification (the tier must allow
// it) and returns its questions.
func (s *Service) Export(ctx context.Context, k store.Key, slug string, ar *quota.Arrival) (Result, error) {
	res := Result{Now: s.now(), Source: "bank"}
	tier, _ := s.Tier(k, res.Now)
	res.Tier = tier
	if !tier.BulkExport {
		return res, certbank.Errorf(certbank.TierRequired, "bulk export needs the Enterprise tier; your key is on the %s tier", tier.Title)
	}
	cands := s.ix.ByCert(slug)
	res.Total = len(cands)
	return res, s.account(ctx, &k, ar, bank.PickPage(cands, 0, len(cands)), &res)
}

func (s *Service) account(ctx context.Context, k *store.Key, ar *quota.Arrival, pick bank.Picker, res *Result) error {
	sp := &quota.Spend{KeyID: k.ID, Tier: res.Tier, Now: res.Now, Pick: pick, Count: true, Arrival: ar}
	err := s.acct.Do(ctx, sp)
	res.Usage = sp.Usage
	res.Unique = s.UniqueOf(res.Tier, sp.Usage.SeenCount)
	if err != nil {
		return err
	}
	res.Picked = sp.Picked
	return nil
}

// Usage returns k's usage now without counting a request.
func (s *Service) Usage(ctx context.Context, k store.Key) (store.Usage, certbank.Tier, time.Time, error) {
	now := s.now()
	tier, _ := s.Tier(k, now)
	sp := &quota.Spend{KeyID: k.ID, Tier: tier, Now: now}
	err := s.acct.Do(ctx, sp)
	return sp.Usage, tier, now, err
}

// MayCheck reports whether the caller may see e's answer: a free-sample
// question always; others only for a key (k non-nil) that has been served
// it.
func (s *Service) MayCheck(ctx context.Context, k *store.Key, e *bank.Entry) (bool, error) {
	if s.ix.IsSample(e) {
		return true, nil
	}
	if k == nil {
		return false, nil
	}
	u, _, _, err := s.Usage(ctx, *k)
	if err != nil {
		return false, err
	}
	return quota.SeenOf(&u).Has(e.Hash), nil
}

type keyCtx struct{}

// WithKey returns ctx carrying the authenticated key of the request.
func WithKey(ctx context.Context, k store.Key) context.Context {
	return context.WithValue(ctx, keyCtx{}, k)
}

// KeyFrom returns the key WithKey put in ctx, or nil.
func KeyFrom(ctx context.Context) *store.Key {
	if k, ok := ctx.Value(keyCtx{}).(store.Key); ok {
		return &k
	}
	return nil
}

// ExamQuery is one mock-exam draw.
type ExamQuery struct {
	// Key draws from the whole bank, accounted; nil draws from the free
	// sample and accounts nothing.
	Key   *store.Key
	Cert  *certbank.Certification
	Count int // the exam's length in questions
	// Arrival, if set, is the request's announcement (Arrive).
	Arrival *quota.Arrival
}

// Exam draws a mock exam: q.Count questions of the certification (fewer if
// it has fewer), spread over its domains by blueprint weight (bank.Quotas)
// and shuffled. With a key it draws on the whole bank and is accounted as
// one request of that many questions: the tier's unique-question allowance
// must hold them (TierRequired otherwise, naming the tiers that do), but
// not its per-request maximum, which is for draws, not exams. Without a
// key it draws on the free sample.
func (s *Service) Exam(ctx context.Context, q ExamQuery) (Result, error) {
	res := Result{Now: s.now(), Picked: []*bank.Entry{}}
	pool := s.ix.ByCert(q.Cert.Slug)
	res.Source = "bank"
	if q.Key == nil {
		pool, res.Source = s.ix.Samples(q.Cert.Slug), "free_sample"
	}
	groups := make([][]*bank.Entry, len(q.Cert.Domains))
	weights := make([]int, len(q.Cert.Domains))
	avail := make([]int, len(q.Cert.Domains))
	for i, d := range q.Cert.Domains {
		weights[i] = d.Weight
		for _, e := range pool {
			if e.Q.Domain == d.Name {
				groups[i] = append(groups[i], e)
			}
		}
		avail[i] = len(groups[i])
	}
	quotas := bank.Quotas(weights, avail, q.Count)
	n := 0
	for _, x := range quotas {
		n += x
	}
	res.Total = len(pool)
	pick := bank.PickByDomain(groups, quotas)
	if q.Key == nil {
		res.Picked = pick(nil, certbank.Unlimited)
		return res, nil
	}
	tier, _ := s.Tier(*q.Key, res.Now)
	res.Tier = tier
	if tier.UniqueQuestions != certbank.Unlimited {
		if n > tier.UniqueQuestions {
			return res, certbank.Errorf(certbank.TierRequired, "this %d-question exam needs a tier that allows at least %d different questions (%s); the %s tier allows %d",
				n, n, strings.Join(s.tiersAllowing(n), " or "), tier.Title, tier.UniqueQuestions)
		}
		u, _, _, err := s.Usage(ctx, *q.Key)
		if err != nil {
			return res, err
		}
		seen := quota.SeenOf(&u)
		seenIn := 0
		for _, e := range pool {
			if seen.Has(e.Hash) {
				seenIn++
			}
		}
		if left := max(tier.UniqueQuestions-u.SeenCount, 0); left+seenIn < n {
			return res, certbank.Errorf(certbank.TierRequired, "this key may be served %d more new questions on the %s tier (it has seen %d of its %d), too few for this %d-question exam; take the half-length exam or upgrade to %s",
				left, tier.Title, u.SeenCount, tier.UniqueQuestions, n, strings.Join(s.tiersAllowing(n+u.SeenCount), " or "))
		}
	}
	return res, s.account(ctx, q.Key, q.Arrival, pick, &res)
}

// tiersAllowing names the tiers whose unique-question allowance holds n.
func (s *Service) tiersAllowing(n int) []string {
	var out []string
	for _, t := range s.ix.Bank().Site.Tiers {
		if t.UniqueQuestions == certbank.Unlimited || t.UniqueQuestions >= n {
			out = append(out, t.Title)
		}
	}
	if len(out) == 0 {
		out = []string{"a larger tier"}
	}
	return out
}
