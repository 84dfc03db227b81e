package generator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
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
	X402URL    string // the paid route for the smallest fillable limit (see Offers)
	HubPath    string
	FeedPath   string
	AvgSeconds int // exam seconds per question
	// Offers are the limit × difficulty combinations the paid route can
	// fill (certbank.Pricing.Offers); OffersNote names the others, "" when
	// there are none.
	Offers     []certbank.Offer
	OffersNote string
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
	if c.Site.Payment.PayTo == "" {
		return nil, fmt.Errorf("the site has no payee: set payment.pay_to in site.yaml or pass --pay-to ADDRESS")
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
		s.RestURL = base + certbank.PathQuestions + "?certification=" + cert.Slug
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
	for _, s := range m.Certs {
		stock := certbank.Stock(s.ByDiff)
		s.Offers, _ = c.Site.Pricing.Offers(stock)
		s.OffersNote = c.Site.Pricing.UnavailableNote(stock)
		s.X402URL = base + certbank.PathX402 + "?certification=" + s.Cert.Slug
		if limit, ok := c.Site.Pricing.SmallestLimit(stock); ok {
			s.X402URL += fmt.Sprintf("&limit=%d", limit)
		}
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
	// The bank bundle, the largest output, is encoded while the site
	// renders; the outputs render in parallel (templates and the model are
	// only read). Results are gathered in output order, so the bytes and the
	// error reported do not depend on scheduling.
	bankErr := make(chan error, 1)
	go func() {
		var err error
		out.BankJSON, err = encodeBank(bank)
		bankErr <- err
	}()
	r, err := newRenderer()
	if err != nil {
		<-bankErr
		return nil, err
	}
	outs := outputs(m)
	data := make([][]byte, len(outs))
	errs := make([]error, len(outs))
	parallel(len(outs), func(i int) { data[i], errs[i] = outs[i].render(r, m) })
	if err := <-bankErr; err != nil {
		return nil, fmt.Errorf("encode bank bundle: %w", err)
	}
	for i, o := range outs {
		if errs[i] != nil {
			return nil, fmt.Errorf("render %s: %w", o.path, errs[i])
		}
		out.Files[o.path] = data[i]
	}
	return out, nil
}

// encodeBank returns exactly the bytes certbank.WriteBank writes for b,
// with the questions, nearly all of the bundle, encoded in parallel chunks:
// encoding/json writes a slice as its elements joined by commas.
func encodeBank(b *certbank.Bank) ([]byte, error) {
	if b.Questions == nil {
		var buf bytes.Buffer
		err := certbank.WriteBank(&buf, b)
		return buf.Bytes(), err
	}
	chunks := make([][]byte, min(4*runtime.GOMAXPROCS(0), len(b.Questions)))
	errs := make([]error, len(chunks))
	parallel(len(chunks), func(c int) {
		qs := b.Questions[c*len(b.Questions)/len(chunks) : (c+1)*len(b.Questions)/len(chunks)]
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // as WriteBank
		for i := range qs {
			if err := enc.Encode(&qs[i]); err != nil {
				errs[c] = err
				return
			}
			buf.Bytes()[buf.Len()-1] = ',' // Encode ends each value with '\n'
		}
		chunks[c] = buf.Bytes()
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	rest := *b
	rest.Questions = nil
	var buf bytes.Buffer
	if err := certbank.WriteBank(&buf, &rest); err != nil {
		return nil, err
	}
	// Bank's fields end with questions then samples, and only the bank
	// itself has a "samples" key, so this marker is found exactly once.
	const marker = `"questions":null,"samples":`
	i := bytes.LastIndex(buf.Bytes(), []byte(marker))
	if i < 0 {
		return nil, fmt.Errorf("bank bundle layout changed: no %s", marker)
	}
	n := buf.Len() + 2
	for _, c := range chunks {
		n += len(c)
	}
	out := make([]byte, 0, n)
	out = append(out, buf.Bytes()[:i]...)
	out = append(out, `"questions":[`...)
	for _, c := range chunks {
		out = append(out, c...)
	}
	if len(chunks) > 0 {
		out = out[:len(out)-1] // the last comma
	}
	out = append(out, `],"samples":`...)
	out = append(out, buf.Bytes()[i+len(marker):]...)
	return out, nil
}

// parallel calls f(0) … f(n-1) on runtime.GOMAXPROCS(0) goroutines and
// returns when all calls have.
func parallel(n int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
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
