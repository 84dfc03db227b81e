package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/x402"
)

// payBench measures paid requests end to end: certbank serve with its
// defaults (SQLite ledger, the development chain), and an open-loop client
// that sends pre-signed x402 version 1 payments at a fixed rate (signing is
// not timed: it is the payer's work) and times each paid request from
// sending to the last byte of the 200. It prints a line per second (so a
// run shows where the chain's clock lead runs out) and the whole run.
func payBench(ctx context.Context, o options) error {
	site, cleanup, err := prepareSite(o)
	if err != nil {
		return err
	}
	defer cleanup()
	f, err := os.Open(site.bankFile)
	if err != nil {
		return err
	}
	bank, err := certbank.ReadBank(f)
	f.Close()
	if err != nil {
		return err
	}
	wallets := 20
	srv, err := startServer(site.bin, "--public", site.public, "--bank", site.bankFile, "--database", "sqlite:"+filepath.Join(site.work, "pay.db"),
		"--dev-wallets", strconv.Itoa(wallets))
	if err != nil {
		return err
	}
	defer srv.stop()
	url := fmt.Sprintf("http://%s/api/v1/x402?certification=%s&limit=10", srv.addr, bank.Certifications[0].Slug)
	req, err := requirementOf(url)
	if err != nil {
		return err
	}
	total := int(o.payRate * (o.duration + o.warmup).Seconds())
	headers := make([]string, total)
	t0 := time.Now()
	for i := range headers {
		_, key := x402.DevWallet(i % wallets)
		if headers[i], err = x402.SignPayment(key, req, x402.PaymentParams{}, time.Now()); err != nil {
			return err
		}
	}
	fmt.Printf("# paid load: GET %s, %.0f payments/s offered for %s (the first %s unmeasured), %d payments signed in %s; load average %s\n",
		url, o.payRate, o.duration+o.warmup, o.warmup, total, time.Since(t0).Round(time.Millisecond), loadAvg())

	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 2048, MaxConnsPerHost: 2048}}
	type sample struct {
		sent    time.Duration // since the start
		latency time.Duration
		status  int
	}
	samples := make([]sample, total)
	var wg sync.WaitGroup
	start := time.Now()
	interval := time.Duration(float64(time.Second) / o.payRate)
	_, _, cpu0 := procStats(srv.cmd.Process.Pid)
	for i := range total {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		wg.Go(func() {
			sent := time.Now()
			r, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return
			}
			r.Header.Set("X-PAYMENT", headers[i])
			status := 0
			if res, err := hc.Do(r); err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				status = res.StatusCode
			}
			samples[i] = sample{sent.Sub(start), time.Since(sent), status}
		})
	}
	wg.Wait()
	_, _, cpu1 := procStats(srv.cmd.Process.Pid)

	pct := func(ls []time.Duration, p int) string {
		if len(ls) == 0 {
			return "-"
		}
		return ms(ls[min(len(ls)-1, len(ls)*p/100)])
	}
	var all []time.Duration
	statuses := map[int]int{}
	bySecond := map[int][]time.Duration{}
	for _, s := range samples {
		if s.sent < o.warmup {
			continue
		}
		statuses[s.status]++
		if s.status == http.StatusOK {
			all = append(all, s.latency)
			sec := int(s.sent / time.Second)
			bySecond[sec] = append(bySecond[sec], s.latency)
		}
	}
	for sec := int(o.warmup / time.Second); sec < int((o.warmup+o.duration)/time.Second); sec++ {
		ls := bySecond[sec]
		slices.Sort(ls)
		fmt.Printf("# second %2d: %4d paid 200s, p50 %s p99 %s max %s\n", sec, len(ls), pct(ls, 50), pct(ls, 99), pct(ls, 100))
	}
	slices.Sort(all)
	measured := 0
	for _, n := range statuses {
		measured += n
	}
	fmt.Printf("paid requests: %d sent in the measured %s (%.0f/s offered), %d × 200 (%.0f/s), statuses %v; p50 %s p90 %s p99 %s max %s; server CPU %.2f ms per paid request (whole run)\n",
		measured, o.duration, o.payRate, statuses[http.StatusOK], float64(statuses[http.StatusOK])/o.duration.Seconds(), statuses,
		pct(all, 50), pct(all, 90), pct(all, 99), pct(all, 100), float64((cpu1-cpu0).Microseconds())/1000/float64(total))
	return nil
}

// requirementOf reads the version 1 requirement of url's 402.
func requirementOf(url string) (x402.Requirement, error) {
	res, err := (&http.Client{Timeout: 10 * time.Second}).Get(url)
	if err != nil {
		return x402.Requirement{}, err
	}
	defer res.Body.Close()
	var body struct {
		Accepts []struct {
			Network           string `json:"network"`
			PayTo             string `json:"payTo"`
			MaxAmountRequired string `json:"maxAmountRequired"`
			Resource          string `json:"resource"`
			MaxTimeoutSeconds int    `json:"maxTimeoutSeconds"`
		} `json:"accepts"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != http.StatusPaymentRequired || len(body.Accepts) == 0 {
		return x402.Requirement{}, fmt.Errorf("GET %s: status %d, %v: want a 402 with accepts", url, res.StatusCode, err)
	}
	a := body.Accepts[0]
	amount, err := strconv.ParseInt(a.MaxAmountRequired, 10, 64)
	if err != nil {
		return x402.Requirement{}, fmt.Errorf("maxAmountRequired %q: %w", a.MaxAmountRequired, err)
	}
	return x402.Requirement{Network: a.Network, PayTo: a.PayTo, Amount: certbank.USDC(amount), Resource: a.Resource, MaxTimeoutSeconds: a.MaxTimeoutSeconds}, nil
}
