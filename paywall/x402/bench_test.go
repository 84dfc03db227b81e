package x402

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"sync"
	"testing"
	"time"
)

// BenchmarkVerifyOffline measures the offline half of accepting a payment:
// Decode of the header, EIP-712 hashing, signature recovery and the checks.
func BenchmarkVerifyOffline(b *testing.B) {
	req := testRequirement()
	_, key := DevWallet(0)
	for _, version := range []int{1, 2} {
		name, value := makePayment(b, version, req, key, nil).Header()
		b.Run("v"+string(rune('0'+version)), func(b *testing.B) {
			b.ReportAllocs()
			now := time.Now()
			cpu, n := processCPU(), 0
			for b.Loop() {
				p, err := Decode(name, value)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := VerifyOffline(p, req, now); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(n), "cpu-ns/op")
		})
	}
}

// BenchmarkDevChainSettle measures settlements on the development chain:
// each iteration settles a batch of payments concurrently (signing
// included), and settlements/s is reported. The clock lead is unbounded
// here to measure capacity; with the default MaxClockLead a long run
// settles about one block per second (see DevChain).
func BenchmarkDevChainSettle(b *testing.B) {
	const wallets = 10
	d := newDevChain(b, DevChainConfig{Wallets: wallets, MaxClockLead: 24 * time.Hour})
	req := testRequirement()
	keys := make([]string, wallets)
	for i := range keys {
		_, keys[i] = DevWallet(i)
	}
	longLived := func(a *authorization) { a.validBefore = big.NewInt(time.Now().Add(48 * time.Hour).Unix()) }
	for _, batch := range []int{1, 16, 64, 256} {
		b.Run("batch"+itoa(batch), func(b *testing.B) {
			settled := 0
			start, cpu := time.Now(), processCPU()
			for b.Loop() {
				var wg sync.WaitGroup
				errs := make(chan error, batch)
				for i := range batch {
					p := makePayment(b, 1, req, keys[(settled+i)%wallets], longLived)
					wg.Go(func() {
						if _, err := d.Settle(context.Background(), p, req); err != nil {
							errs <- err
						}
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					b.Fatal(err)
				}
				settled += batch
			}
			b.ReportMetric(float64(settled)/time.Since(start).Seconds(), "settlements/s")
			b.ReportMetric(float64(processCPU()-cpu)/float64(settled), "cpu-ns/settlement")
		})
	}
}

func itoa(n int) string { return big.NewInt(int64(n)).String() }

// BenchmarkPayHTTP measures whole paid requests: Pay (GET, 402, sign,
// retry) against an httptest server that decodes, verifies and settles on
// the development chain with the default MaxClockLead. Each iteration runs
// a batch of concurrent payers; paid requests/s is reported.
func BenchmarkPayHTTP(b *testing.B) {
	const wallets = 10
	d := newDevChain(b, DevChainConfig{Wallets: wallets})
	srv := paidServer(b, NewLocal(d), 10000, true)
	keys := make([]string, wallets)
	for i := range keys {
		_, keys[i] = DevWallet(i)
	}
	client := srv.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = 512
	for _, batch := range []int{64, 256, 512} {
		b.Run("batch"+itoa(batch), func(b *testing.B) {
			paid := 0
			start, cpu := time.Now(), processCPU()
			for b.Loop() {
				var wg sync.WaitGroup
				errs := make(chan error, batch)
				for i := range batch {
					key := keys[(paid+i)%wallets]
					wg.Go(func() {
						res, err := Pay(context.Background(), client, srv.URL+"/api/v1/x402?limit=10", key, 10000, i%2 == 0)
						if err == nil && res.Status != http.StatusOK {
							err = fmt.Errorf("status %d: %s", res.Status, res.Body)
						}
						if err != nil {
							errs <- err
						}
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					b.Fatal(err)
				}
				paid += batch
			}
			b.ReportMetric(float64(paid)/time.Since(start).Seconds(), "paid-requests/s")
			b.ReportMetric(float64(processCPU()-cpu)/float64(paid), "cpu-ns/request")
		})
	}
}
