// Package quota applies the tiers' limits to API keys: the accountant that
// records usage with group commit (a request is answered only once its
// usage is durable), the seen sets behind the unique-question limit, the
// limit errors with their retry times, and the tier a key is served with.
// It knows no HTTP; Noop is the accountant of the benchmark baseline.
package quota

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/bank"
	"github.com/certbank/certbank/paywall/store"
)

// seenSet is a key's set of served questions: sorted 64-bit question hashes,
// 8 bytes each, big-endian. It is searched in place without decoding.
type seenSet []byte

func (s seenSet) len() int { return len(s) / 8 }

func (s seenSet) at(i int) uint64 { return binary.BigEndian.Uint64(s[i*8:]) }

func (s seenSet) has(h uint64) bool {
	lo, hi := 0, s.len() // a binary search without sort.Search's closure calls: this is hot
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if binary.BigEndian.Uint64(s[m*8:]) < h {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < s.len() && binary.BigEndian.Uint64(s[lo*8:]) == h
}

// seenSetOf returns the set of hs (in any order, repeats allowed).
func seenSetOf(hs []uint64) seenSet {
	hs = slices.Compact(slices.Sorted(slices.Values(hs)))
	out := make(seenSet, 0, 8*len(hs))
	for _, h := range hs {
		out = binary.BigEndian.AppendUint64(out, h)
	}
	return out
}

// merge returns the union of two disjoint sets as a new set.
func (s seenSet) merge(t seenSet) seenSet {
	out := make(seenSet, 0, len(s)+len(t))
	i, j := 0, 0
	for i < s.len() && j < t.len() {
		// copy the run of s below t's next entry in bulk
		h := t.at(j)
		k := i + sort.Search(s.len()-i, func(k int) bool { return s.at(i+k) >= h })
		out = append(out, s[i*8:k*8]...)
		out = binary.BigEndian.AppendUint64(out, h)
		i, j = k, j+1
	}
	out = append(out, s[i*8:]...)
	return append(out, t[j*8:]...)
}

// seen is a key's whole seen set in the two parts the store keeps (see
// Usage): base, sorted, the bulk of its history, rewritten only when recent
// outgrows recentLimit and is folded into it; and recent, the additions
// since, in the order they were made. The parts are disjoint. recent only
// ever grows by appending between folds, so a store can record a save as
// the bytes appended (paywall/sqlite does).
type seen struct{ base, recent seenSet }

// SeenOf returns the seen set of a usage loaded from the store.
func SeenOf(u *store.Usage) bank.Seen { return seenOf(u) }

func seenOf(u *store.Usage) seen { return seen{base: u.SeenBase, recent: u.Seen} }

func (s seen) Has(h uint64) bool { return s.recent.contains(h) || s.base.has(h) }

func (s seen) len() int { return s.base.len() + s.recent.len() }

// contains is has for an unsorted set: a scan, cheap for recent's few
// hundred entries.
func (s seenSet) contains(h uint64) bool {
	for i := 0; i+8 <= len(s); i += 8 {
		if binary.BigEndian.Uint64(s[i:]) == h {
			return true
		}
	}
	return false
}

// recentLimit is how many entries recent may hold over a base of n before
// it is folded into base. Each save writes recent (on average half the
// limit) and, every limit/k requests that add k new questions, the whole
// base: the cost per request, 4·limit + 8·n·k/limit bytes, is least near
// limit = √(2·n·k); with k = 10 that is √(20·n). At least 256 entries
// (2 KB), so that short histories are never folded.
func recentLimit(n int) int {
	l := 256
	for (l+1)*(l+1) <= 20*n {
		l++
	}
	return l
}

// add returns the set with hs added; it never changes s's parts in place.
// folded reports that base changed (recent was folded into it).
func (s seen) add(hs []uint64) (out seen, folded bool) {
	recent := slices.Clip(s.recent) // appending copies
	for _, h := range hs {
		if !s.base.has(h) && !recent.contains(h) {
			recent = binary.BigEndian.AppendUint64(recent, h)
		}
	}
	out = seen{base: s.base, recent: recent}
	if out.recent.len() > recentLimit(out.base.len()) {
		hs := make([]uint64, out.recent.len())
		for i := range hs {
			hs[i] = out.recent.at(i)
		}
		return seen{base: out.base.merge(seenSetOf(hs))}, true
	}
	return out, false
}

// Spend is one request to account: what it asks, and (after Do) what it
// got.
type Spend struct {
	KeyID string
	Tier  certbank.Tier
	Now   time.Time
	Pick  bank.Picker
	Count bool // false: read usage only (the usage endpoint, answer checks)
	// Arrival, if set, is the request's announcement (Arrive); Do
	// withdraws it when the request is queued.
	Arrival *Arrival

	// Results: the questions picked and the key's usage after the request.
	Picked []*bank.Entry
	Usage  store.Usage

	err  error
	done chan struct{}
}

// Metrics is what the accountant reports: failed store transactions and
// the size of each group commit.
type Metrics interface {
	StoreError()
	Batch(n int)
}

// accountant records usage with group commit: requests queue up, one
// goroutine takes everything queued, applies the limits of each request in
// arrival order inside one store transaction, commits once, and only then
// answers every request of the batch. A request is answered 200 only if its
// usage is durably stored; when the store fails, every request in the batch
// fails and nothing of it is counted.
//
// Batches form by themselves when the store is the bottleneck. When it is
// not, the request that finds the accountant idle would start a
// transaction of one while the requests right behind it are still being
// parsed, and each would pay a whole transaction. So the accountant first
// waits, up to linger, for the requests already inside a handler (counted
// by arrive) to join the batch; with no request in flight it starts at
// once, so a lone request is never delayed.
//
// A store that runs concurrent usage transactions safely (PostgreSQL, whose
// transactions lock their keys' rows in a global order) can ask for several
// workers with a UsageConcurrency() int method: while one batch waits on
// the database another one forms and runs.
type Accountant struct {
	store    store.UsageStore
	queue    chan *Spend
	maxBatch int
	linger   time.Duration // the longest a batch waits for more requests
	gap      time.Duration // how long it waits for the next one
	incoming atomic.Int64  // requests inside a handler that have not queued yet
	stop     chan struct{}
	wg       sync.WaitGroup
	metrics  Metrics
}

// concurrentUsage is implemented by stores whose UpdateUsage calls may run
// concurrently, each locking the keys it loads.
type concurrentUsage interface{ UsageConcurrency() int }

// New starts an accountant over st (with as many workers as st's
// UsageConcurrency, if it has one); Close stops it. m may be nil.
func New(st store.UsageStore, m Metrics) *Accountant {
	a := &Accountant{store: st, queue: make(chan *Spend, 4096), maxBatch: 512, linger: time.Millisecond, gap: 100 * time.Microsecond, stop: make(chan struct{}), metrics: m}
	workers := 1
	if c, ok := st.(concurrentUsage); ok {
		workers = min(max(c.UsageConcurrency(), 1), 16)
	}
	for range workers {
		a.wg.Add(1)
		go a.loop()
	}
	return a
}

// Arrival is a request announced to the accountant before it is parsed,
// so that a group commit waits for it instead of committing without it.
// Leave (or Do) withdraws it; the zero Arrival announces nothing.
type Arrival struct {
	a    *Accountant
	left bool
}

// Arrive announces a request that will call Do.
func (a *Accountant) Arrive() Arrival {
	a.incoming.Add(1)
	return Arrival{a: a}
}

// Leave withdraws the announcement; it may be called more than once.
func (ar *Arrival) Leave() {
	if ar == nil || ar.a == nil || ar.left {
		return
	}
	ar.left = true
	ar.a.incoming.Add(-1)
}

// Close stops the accountant: queued requests are answered Unavailable.
func (a *Accountant) Close() {
	close(a.stop)
	a.wg.Wait()
}

// Do queues s and waits for its result: nil when s was accounted (and
// s.Picked and s.Usage are set), a *LimitError when a limit refused it, an
// Unavailable error when the store failed (nothing of the batch is
// counted). If s.Arrival is set, Do withdraws it once s is queued.
func (a *Accountant) Do(ctx context.Context, s *Spend) error {
	s.done = make(chan struct{})
	select {
	case a.queue <- s:
		s.Arrival.Leave()
	case <-ctx.Done():
		return ctx.Err()
	case <-a.stop:
		return certbank.Errorf(certbank.Unavailable, "the service is shutting down; retry")
	}
	<-s.done // always answered, even if ctx ends: the outcome must be known
	return s.err
}

func (a *Accountant) loop() {
	defer a.wg.Done()
	var batch []*Spend
	var timer *time.Timer
	last := 0                  // size of the last batch
	var lastTook time.Duration // how long its transaction took
	for {
		var first *Spend
		select {
		case first = <-a.queue:
		case <-a.stop:
			// answer whatever is still queued
			for {
				select {
				case s := <-a.queue:
					s.err = certbank.Errorf(certbank.Unavailable, "the service is shutting down; retry")
					close(s.done)
				default:
					return
				}
			}
		}
		batch = append(batch[:0], first)
	fill:
		for len(batch) < a.maxBatch {
			select {
			case s := <-a.queue:
				batch = append(batch, s)
			default:
				break fill
			}
		}
		// Linger while requests keep arriving: each arrival extends the
		// wait by gap, up to linger in all, and no longer than the last
		// transaction took (a cheap store gains nothing from waiting).
		// Only with evidence of concurrency (requests inside handlers,
		// or a last batch of more than one), so a lone client is never
		// delayed.
		linger := min(a.linger, lastTook) // waiting longer than a transaction takes cannot pay
		if len(batch) < a.maxBatch && linger >= 50*time.Microsecond && (a.incoming.Load() > 0 || last > 1) {
			gap := min(a.gap, linger/2)
			deadline := time.Now().Add(linger)
			if timer == nil {
				timer = time.NewTimer(gap)
			} else {
				timer.Reset(gap)
			}
		wait:
			for len(batch) < a.maxBatch {
				select {
				case s := <-a.queue:
					batch = append(batch, s)
					d := min(gap, time.Until(deadline))
					if d <= 0 {
						break wait
					}
					timer.Reset(d)
				case <-timer.C:
					if a.incoming.Load() == 0 || !time.Now().Before(deadline) {
						break wait
					}
					timer.Reset(min(gap, time.Until(deadline)))
				}
			}
			timer.Stop()
		}
		last = len(batch)
		start := time.Now()
		a.run(batch)
		lastTook = time.Since(start)
		clear(batch) // drop references to answered requests
	}
}

func (a *Accountant) run(batch []*Spend) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ids := make([]string, 0, len(batch))
	seenID := map[string]bool{}
	month := batch[0].Now.UTC().Format("2006-01")
	for _, s := range batch {
		if !seenID[s.KeyID] {
			seenID[s.KeyID] = true
			ids = append(ids, s.KeyID)
		}
		if m := s.Now.UTC().Format("2006-01"); m > month {
			month = m
		}
	}
	err := a.store.UpdateUsage(ctx, func(tx store.UsageTx) error {
		us, err := tx.Load(ctx, ids, month)
		if err != nil {
			return err
		}
		changed := map[string]*store.Usage{}
		for _, s := range batch {
			u := us[s.KeyID]
			if u == nil {
				u = &store.Usage{KeyID: s.KeyID, Month: month}
				us[s.KeyID] = u
			}
			s.err = apply(u, s)
			s.Usage = *u
			if s.err == nil && s.Count {
				changed[s.KeyID] = u
			}
		}
		save := make([]*store.Usage, 0, len(changed))
		for _, id := range ids {
			if u := changed[id]; u != nil {
				save = append(save, u)
			}
		}
		if len(save) == 0 {
			return nil
		}
		return tx.Save(ctx, save)
	})
	if err != nil {
		if certbank.ErrorCode(err) != certbank.Unavailable {
			err = fmt.Errorf("record usage: %w", err)
		}
		if a.metrics != nil {
			a.metrics.StoreError()
		}
		for _, s := range batch {
			s.err, s.Picked = err, nil
		}
	}
	if a.metrics != nil {
		a.metrics.Batch(len(batch))
	}
	for _, s := range batch {
		close(s.done)
	}
}

// LimitError is a request refused by a limit (RateLimited or
// MonthlyLimitExceeded), with when to retry.
type LimitError struct {
	err        *certbank.Error
	RetryAfter time.Duration
}

func (e *LimitError) Error() string { return e.err.Message }
func (e *LimitError) Unwrap() error { return e.err }

// apply checks the limits of one request against u and, if it may go on,
// picks its questions and counts it in u.
func apply(u *store.Usage, s *Spend) error {
	minute := certbank.MinuteStart(s.Now)
	if !u.MinuteStart.Equal(minute) {
		u.MinuteStart, u.MinuteCount = minute, 0
	}
	if !s.Count {
		return nil
	}
	t := s.Tier
	if u.MinuteCount >= t.PerMinute {
		next := minute.Add(time.Minute)
		return &LimitError{certbank.Errorf(certbank.RateLimited,
			"rate limit of %d requests per minute reached for the %s tier; retry after %s", t.PerMinute, t.Title, next.Format(time.RFC3339)), next.Sub(s.Now)}
	}
	if t.PerMonth != certbank.Unlimited && u.MonthRequests >= t.PerMonth {
		next := certbank.MonthStart(s.Now).AddDate(0, 1, 0)
		return &LimitError{certbank.Errorf(certbank.MonthlyLimitExceeded,
			"monthly limit of %d requests reached for the %s tier; it resets on %s (UTC), or upgrade the key's tier", t.PerMonth, t.Title, next.Format("2006-01-02")), next.Sub(s.Now)}
	}
	newAllowed := certbank.Unlimited
	if t.UniqueQuestions != certbank.Unlimited {
		newAllowed = max(t.UniqueQuestions-u.SeenCount, 0)
	}
	sn := seenOf(u)
	s.Picked = s.Pick(sn, newAllowed)
	var buf [16]uint64
	hs := buf[:0]
	for _, e := range s.Picked {
		hs = append(hs, e.Hash)
	}
	ns, folded := sn.add(hs)
	u.Seen, u.SeenBase, u.SeenCount = ns.recent, ns.base, ns.len()
	u.SaveBase = u.SaveBase || folded
	u.MinuteCount++
	u.MonthRequests++
	u.MonthQuestions += len(s.Picked)
	return nil
}

// NewLimitError returns a limit error of err's kind, to retry after d.
func NewLimitError(err *certbank.Error, d time.Duration) *LimitError {
	return &LimitError{err: err, RetryAfter: d}
}
