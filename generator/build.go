package generator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/certbank/certbank"
)

// Options tune a build.
type Options struct {
	// Date is the build date (YYYY-MM-DD) written as "generated" and as
	// every sitemap lastmod. Empty means the newest date found in the
	// content (exam_currency_verified, verification dates), so the same
	// content always gives the same bytes.
	Date string
}

// Output is a built site: every public file and the private bank bundle.
type Output struct {
	Files    map[string][]byte // path under public/ (slash-separated, no leading slash) → bytes
	Bank     *certbank.Bank
	BankJSON []byte
}

// Paths returns the public paths in sorted order.
func (o *Output) Paths() []string { return sortedKeys(o.Files) }

// certStats is what the pages and documents say about one certification.
type certStats struct {
	Cert       *certbank.Certification
	Published  []*certbank.Question
	Sample     []*certbank.Question
	ByDiff     map[certbank.Difficulty]int
	ByDomain   map[string]int
	Authored   int // questions in content, published or not
	HubURL     string
	FeedURL    string
	RestURL    string
	X402URL    string
	HubPath    string
	FeedPath   string
	AvgSeconds int // exam seconds per question
}

// model is the whole build's input to the outputs.
type model struct {
	Site      certbank.Site
	Date      string
	Certs     []*certStats
	Published []certbank.Question
	Total     int
	Authored  int
	Network   certbank.Network
}

// Build renders every output of the content tree in memory.
func Build(c *Content, opt Options) (*Output, error) {
	date := opt.Date
	if date == "" {
		date = newestDate(c)
	}
	if _, err := time.Parse(time.DateOnly, date); err != nil {
		return nil, fmt.Errorf("build date %q must look like 2026-11-21", date)
	}
	m := &model{Site: c.Site, Date: date, Authored: len(c.Questions)}
	m.Network, _ = certbank.LookupNetwork(c.Site.Payment.Network)
	m.Published = publish(c)
	sort.SliceStable(m.Published, func(i, j int) bool {
		if m.Published[i].Certification != m.Published[j].Certification {
			return m.Published[i].Certification < m.Published[j].Certification
		}
		return m.Published[i].ID < m.Published[j].ID
	})
	m.Total = len(m.Published)
	bySlug := map[string]*certStats{}
	base := c.Site.BaseURL
	for i := range c.Certifications {
		cert := &c.Certifications[i]
		s := &certStats{
			Cert:     cert,
			ByDiff:   map[certbank.Difficulty]int{},
			ByDomain: map[string]int{},
			HubPath:  "certifications/" + cert.Slug + "/",
			FeedPath: "api/" + cert.Slug + "/questions-free.json",
		}
		s.HubURL = base + "/" + s.HubPath
		s.FeedURL = base + "/" + s.FeedPath
		s.RestURL = base + "/api/v1/questions?certification=" + cert.Slug
		s.X402URL = base + "/api/v1/x402?certification=" + cert.Slug
		if cert.ExamQuestions > 0 {
			s.AvgSeconds = cert.ExamMinutes * 60 / cert.ExamQuestions
		}
		bySlug[cert.Slug] = s
		m.Certs = append(m.Certs, s)
	}
	for i := range c.Questions {
		if s := bySlug[c.Questions[i].Certification]; s != nil {
			s.Authored++
		}
	}
	for i := range m.Published {
		q := &m.Published[i]
		s := bySlug[q.Certification]
		s.Published = append(s.Published, q)
		s.ByDiff[q.Difficulty]++
		s.ByDomain[q.Domain]++
	}
	bank := &certbank.Bank{
		Version:   certbank.BankVersion,
		Generated: date,
		Site:      c.Site,
		Questions: m.Published,
		Samples:   map[string][]string{},
	}
	for _, s := range m.Certs {
		s.Sample = chooseSample(s.Cert, s.Published, c.Site.FreeSampleSize)
		ids := make([]string, len(s.Sample))
		for i, q := range s.Sample {
			ids[i] = q.ID
		}
		bank.Samples[s.Cert.Slug] = ids
		bank.Certifications = append(bank.Certifications, *s.Cert)
	}

	out := &Output{Files: map[string][]byte{}, Bank: bank}
	var buf bytes.Buffer
	if err := certbank.WriteBank(&buf, bank); err != nil {
		return nil, fmt.Errorf("encode bank bundle: %w", err)
	}
	out.BankJSON = buf.Bytes()
	r, err := newRenderer()
	if err != nil {
		return nil, err
	}
	for _, o := range outputs(m) {
		data, err := o.render(r, m)
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", o.path, err)
		}
		out.Files[o.path] = data
	}
	return out, nil
}

// newestDate is the newest YYYY-MM-DD date in the content.
func newestDate(c *Content) string {
	d := c.Site.ExamCurrencyVerified
	for i := range c.Questions {
		for _, v := range c.Questions[i].Verifications {
			if v.Date > d {
				d = v.Date
			}
		}
	}
	if d == "" {
		d = "1970-01-01"
	}
	return d
}

// jsonDoc encodes v with two-space indentation, no HTML escaping and a
// trailing newline: the published bytes of every JSON document.
func jsonDoc(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
