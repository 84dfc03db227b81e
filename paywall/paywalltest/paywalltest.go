// Package paywalltest holds what the service's tests share: a small bank of
// two certifications and a settable clock. It imports only the domain.
package paywalltest

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/certbank/certbank"
)

// Bank returns a small bank: two certifications with n questions each,
// spread over two domains and three difficulties.
func Bank(n int) *certbank.Bank {
	b := &certbank.Bank{Version: certbank.BankVersion, Generated: "2026-11-21", Samples: map[string][]string{}}
	b.Site = certbank.Site{
		Name: "certbank", BaseURL: "http://certbank.test", FunctionsURL: "http://certbank.test", MCPURL: "http://certbank.test",
		Contact: "support@certbank.test", FreeSampleSize: 5,
		Quality: certbank.QualityPolicy{MinAgreeingSolvers: 2},
		Pricing: certbank.Pricing{Entries: []certbank.PriceEntry{{Questions: 10, Amount: 10000}, {Questions: 25, Amount: 20000}, {Questions: 50, Amount: 40000}}, NoAnswerDiscountPercent: 30},
		Payment: certbank.Payment{Network: "base-sepolia", PayTo: "0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c", MaxTimeoutSeconds: 300},
		Tiers: []certbank.Tier{
			{Name: "free", Title: "Free", PerMinute: 10, PerMonth: 100, UniqueQuestions: 50, MaxLimit: 10},
			{Name: "developer", Title: "Developer", PerMinute: 60, PerMonth: 10000, UniqueQuestions: 5000, MaxLimit: 50},
			{Name: "enterprise", Title: "Enterprise", PerMinute: 300, PerMonth: certbank.Unlimited, UniqueQuestions: certbank.Unlimited, MaxLimit: 100, Pagination: true, BulkExport: true},
		},
	}
	for _, slug := range []string{"cissp", "pmp"} {
		b.Certifications = append(b.Certifications, certbank.Certification{Slug: slug, Name: strings.ToUpper(slug), Provider: map[string]string{"cissp": "SecBody", "pmp": "PMBody"}[slug],
			Status: certbank.Current, ExamMinutes: 60, ExamQuestions: 60, Domains: []certbank.Domain{
				{Name: "Alpha", Weight: 50, Objectives: []certbank.Objective{{Code: "1.1", Name: "Explain alpha"}, {Code: "1.2", Name: "Apply alpha"}}},
				{Name: "Beta", Weight: 50, Objectives: []certbank.Objective{{Code: "2.1", Name: "Analyse beta"}}}}})
		for i := 0; i < n; i++ {
			id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, map[string]int{"cissp": 1, "pmp": 2}[slug])
			b.Questions = append(b.Questions, certbank.Question{
				ID: id, Certification: slug, Domain: []string{"Alpha", "Beta"}[i%2], Objective: []string{"1.1", "2.1", "1.2", "2.1"}[i%4],
				Tests: fmt.Sprintf("fact %d of %s", i, slug), Difficulty: certbank.Difficulties[i%3],
				Stem: fmt.Sprintf("Question %d of %s: which option is right?", i, slug), Options: certbank.Options{"one", "two", "three", "four"},
				Answer: certbank.Letters[i%4], Explanation: "Because.",
			})
			if i < 5 {
				b.Samples[slug] = append(b.Samples[slug], id)
			}
		}
	}
	return b
}

// Clock is a settable clock for paywall.Config.Now.
type Clock struct{ t atomic.Int64 }

// Now returns the clock's time.
func (c *Clock) Now() time.Time { return time.Unix(0, c.t.Load()).UTC() }

// Set sets the clock.
func (c *Clock) Set(t time.Time) { c.t.Store(t.UnixNano()) }

// Add moves the clock forward.
func (c *Clock) Add(d time.Duration) { c.t.Add(int64(d)) }

// NewClock returns a clock set to t.
func NewClock(t time.Time) *Clock { c := &Clock{}; c.Set(t); return c }
