package certbank

import "time"

// Unlimited marks a tier limit that does not apply.
const Unlimited = -1

// The tier names of SPEC.md §8.
const (
	TierFree       = "free"
	TierDeveloper  = "developer"
	TierEnterprise = "enterprise"
)

// Tier is what an API key may do.
type Tier struct {
	Name            string `json:"name,omitempty"`
	Title           string `json:"title,omitempty"`            // for people: "Free", "Developer", "Enterprise"
	Price           string `json:"price,omitempty"`            // for people: "0", "199 USD per month"
	PerMinute       int    `json:"per_minute,omitempty"`       // requests per minute
	PerMonth        int    `json:"per_month,omitempty"`        // requests per calendar month (UTC), or Unlimited
	UniqueQuestions int    `json:"unique_questions,omitempty"` // distinct questions a key may be served, or Unlimited
	MaxLimit        int    `json:"max_limit,omitempty"`        // largest limit per request
	Pagination      bool   `json:"pagination,omitempty"`       // sequential pagination (random=false with page/cursor)
	BulkExport      bool   `json:"bulk_export,omitempty"`      // NDJSON export of a whole certification
}

// MonthStart returns the first instant of t's calendar month in UTC.
func MonthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// MinuteStart returns t truncated to the minute, in UTC.
func MinuteStart(t time.Time) time.Time { return t.UTC().Truncate(time.Minute) }
