package x402

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestSmokeThroughput(t *testing.T) {
	d := newDevChain(t, DevChainConfig{Wallets: 10, MaxClockLead: time.Hour})
	req := testRequirement()
	const n = 2000
	ps := make([]*Payment, n)
	for i := range ps {
		_, key := DevWallet(i % 10)
		ps[i] = makePayment(t, 1, req, key, nil)
	}
	for _, conc := range []int{1, 16, 64, 256} {
		start := time.Now()
		var wg sync.WaitGroup
		sem := make(chan struct{}, conc)
		var mu sync.Mutex
		fails := 0
		cnt := n / 4
		if conc == 1 {
			cnt = 100
		}
		batch := ps[:cnt]
		ps = ps[cnt:]
		for _, p := range batch {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if _, err := d.Settle(context.Background(), p, req); err != nil {
					mu.Lock()
					fails++
					mu.Unlock()
					t.Log(err)
				}
			}()
		}
		wg.Wait()
		el := time.Since(start)
		t.Logf("conc %d: %d in %v = %.0f/s fails %d", conc, len(batch), el, float64(len(batch))/el.Seconds(), fails)
	}
}
