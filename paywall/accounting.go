package paywall

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/certbank/certbank"
)

// seenSet is a key's set of served questions: sorted 64-bit question hashes,
// 8 bytes each, big-endian. It is searched in place without decoding.
type seenSet []byte

func (s seenSet) len() int { return len(s) / 8 }

func (s seenSet) at(i int) uint64 { return binary.BigEndian.Uint64(s[i*8:]) }

func (s seenSet) has(h uint64) bool {
	n := s.len()
	i := sort.Search(n, func(i int) bool { return s.at(i) >= h })
	return i < n && s.at(i) == h
}

// with returns the set with hs added (hs need not be sorted or new).
func (s seenSet) with(hs []uint64) seenSet {
	add := make([]uint64, 0, len(hs))
	for _, h := range hs {
		if !s.has(h) {
			add = append(add, h)
		}
	}
	if len(add) == 0 {
		return s
	}
	sort.Slice(add, func(i, j int) bool { return add[i] < add[j] })
	out := make(seenSet, 0, len(s)+8*len(add))
	i, j := 0, 0
	var buf [8]byte
	for i < s.len() || j < len(add) {
		var v uint64
		switch {
		case j >= len(add) || (i < s.len() && s.at(i) < add[j]):
			v = s.at(i)
			i++
		default:
			v = add[j]
			j++
			if j < len(add) && add[j] == v {
				continue
			}
		}
		binary.BigEndian.PutUint64(buf[:], v)
		out = append(out, buf[:]...)
	}
	return out
}

// pickFunc chooses the questions of a request given the key's seen set and
// how many new questions it may still see (certbank.Unlimited for no
// limit). It returns the chosen hashes' entries.
type pickFunc func(seen seenSet, newAllowed int) []*entry

// spend is one request waiting to be accounted.
type spend struct {
	keyID string
	tier  certbank.Tier
	now   time.Time
	pick  pickFunc
	count bool // false: read usage only (the usage endpoint)

	// results
	picked []*entry
	usage  Usage
	err    error
	done   chan struct{}
}

// accountant records usage with group commit: requests queue up, one
// goroutine takes everything queued, applies the limits of each request in
// arrival order inside one store transaction, commits once, and only then
// answers every request of the batch. A request is answered 200 only if its
// usage is durably stored; when the store fails, every request in the batch
// fails and nothing of it is counted.
type accountant struct {
	store    Store
	queue    chan *spend
	maxBatch int
	stop     chan struct{}
	wg       sync.WaitGroup
	metrics  *metrics
}

func newAccountant(store Store, m *metrics) *accountant {
	a := &accountant{store: store, queue: make(chan *spend, 4096), maxBatch: 512, stop: make(chan struct{}), metrics: m}
	a.wg.Add(1)
	go a.loop()
	return a
}

func (a *accountant) close() {
	close(a.stop)
	a.wg.Wait()
}

// do queues s and waits for its result.
func (a *accountant) do(ctx context.Context, s *spend) error {
	s.done = make(chan struct{})
	select {
	case a.queue <- s:
	case <-ctx.Done():
		return ctx.Err()
	case <-a.stop:
		return certbank.Errorf(certbank.Unavailable, "the service is shutting down; retry")
	}
	<-s.done // always answered, even if ctx ends: the outcome must be known
	return s.err
}

func (a *accountant) loop() {
	defer a.wg.Done()
	for {
		var first *spend
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
		batch := []*spend{first}
	fill:
		for len(batch) < a.maxBatch {
			select {
			case s := <-a.queue:
				batch = append(batch, s)
			default:
				break fill
			}
		}
		a.run(batch)
	}
}

func (a *accountant) run(batch []*spend) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ids := make([]string, 0, len(batch))
	seenID := map[string]bool{}
	month := batch[0].now.UTC().Format("2006-01")
	for _, s := range batch {
		if !seenID[s.keyID] {
			seenID[s.keyID] = true
			ids = append(ids, s.keyID)
		}
		if m := s.now.UTC().Format("2006-01"); m > month {
			month = m
		}
	}
	err := a.store.UpdateUsage(ctx, func(tx UsageTx) error {
		us, err := tx.Load(ctx, ids, month)
		if err != nil {
			return err
		}
		changed := map[string]*Usage{}
		for _, s := range batch {
			u := us[s.keyID]
			if u == nil {
				u = &Usage{KeyID: s.keyID, Month: month}
				us[s.keyID] = u
			}
			s.err = apply(u, s)
			s.usage = *u
			if s.err == nil && s.count {
				changed[s.keyID] = u
			}
		}
		save := make([]*Usage, 0, len(changed))
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
			a.metrics.storeError()
		}
		for _, s := range batch {
			s.err, s.picked = err, nil
		}
	}
	for _, s := range batch {
		close(s.done)
	}
}

// Errors of apply, with their retry time.
type limitError struct {
	err        *certbank.Error
	retryAfter time.Duration
}

func (e *limitError) Error() string { return e.err.Message }
func (e *limitError) Unwrap() error { return e.err }

// apply checks the limits of one request against u and, if it may go on,
// picks its questions and counts it in u.
func apply(u *Usage, s *spend) error {
	minute := certbank.MinuteStart(s.now)
	if !u.MinuteStart.Equal(minute) {
		u.MinuteStart, u.MinuteCount = minute, 0
	}
	if !s.count {
		return nil
	}
	t := s.tier
	if u.MinuteCount >= t.PerMinute {
		next := minute.Add(time.Minute)
		return &limitError{certbank.Errorf(certbank.RateLimited,
			"rate limit of %d requests per minute reached for the %s tier; retry after %s", t.PerMinute, t.Title, next.Format(time.RFC3339)), next.Sub(s.now)}
	}
	if t.PerMonth != certbank.Unlimited && u.MonthRequests >= t.PerMonth {
		next := certbank.MonthStart(s.now).AddDate(0, 1, 0)
		return &limitError{certbank.Errorf(certbank.MonthlyLimitExceeded,
			"monthly limit of %d requests reached for the %s tier; it resets on %s (UTC), or upgrade the key's tier", t.PerMonth, t.Title, next.Format("2006-01-02")), next.Sub(s.now)}
	}
	newAllowed := certbank.Unlimited
	if t.UniqueQuestions != certbank.Unlimited {
		newAllowed = max(t.UniqueQuestions-u.SeenCount, 0)
	}
	seen := seenSet(u.Seen)
	s.picked = s.pick(seen, newAllowed)
	hs := make([]uint64, len(s.picked))
	for i, e := range s.picked {
		hs[i] = e.Hash
	}
	ns := seen.with(hs)
	u.Seen, u.SeenCount = ns, ns.len()
	u.MinuteCount++
	u.MonthRequests++
	u.MonthQuestions += len(s.picked)
	return nil
}
