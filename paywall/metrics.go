package paywall

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// metrics counts what /metrics reports in the Prometheus text format:
// requests by route and status, a latency histogram per route, quota
// rejections by kind and store errors. It is small enough to need no
// client library.
type metrics struct {
	mu        sync.Mutex
	requests  map[routeStatus]uint64
	latency   map[string]*histogram
	rejected  map[string]uint64 // RATE_LIMITED / MONTHLY_LIMIT_EXCEEDED
	storeErrs uint64
	payments  map[string]uint64 // settled / failed / pending
	// usage group commit: transactions and the requests they carried
	batches, batched uint64
}

type routeStatus struct {
	route  string
	status int
}

var latencyBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

type histogram struct {
	counts []uint64
	sum    float64
	n      uint64
}

func newMetrics() *metrics {
	return &metrics{requests: map[routeStatus]uint64{}, latency: map[string]*histogram{}, rejected: map[string]uint64{}, payments: map[string]uint64{}}
}

func (m *metrics) observe(route string, status int, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests[routeStatus{route, status}]++
	h := m.latency[route]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(latencyBuckets))}
		m.latency[route] = h
	}
	s := d.Seconds()
	for i, b := range latencyBuckets {
		if s <= b {
			h.counts[i]++
		}
	}
	h.sum += s
	h.n++
}

func (m *metrics) reject(kind string) {
	m.mu.Lock()
	m.rejected[kind]++
	m.mu.Unlock()
}

// StoreError counts a failed store operation.
func (m *metrics) StoreError() {
	m.mu.Lock()
	m.storeErrs++
	m.mu.Unlock()
}

// Batch counts a usage transaction of n requests.
func (m *metrics) Batch(requests int) {
	m.mu.Lock()
	m.batches++
	m.batched += uint64(requests)
	m.mu.Unlock()
}

func (m *metrics) payment(status string) {
	m.mu.Lock()
	m.payments[status]++
	m.mu.Unlock()
}

func (m *metrics) write(w io.Writer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Fprintln(w, "# HELP certbank_http_requests_total HTTP requests by route and status.")
	fmt.Fprintln(w, "# TYPE certbank_http_requests_total counter")
	keys := make([]routeStatus, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].route != keys[j].route {
			return keys[i].route < keys[j].route
		}
		return keys[i].status < keys[j].status
	})
	for _, k := range keys {
		fmt.Fprintf(w, "certbank_http_requests_total{route=%q,status=\"%d\"} %d\n", k.route, k.status, m.requests[k])
	}
	fmt.Fprintln(w, "# HELP certbank_http_request_duration_seconds Request latency by route.")
	fmt.Fprintln(w, "# TYPE certbank_http_request_duration_seconds histogram")
	routes := make([]string, 0, len(m.latency))
	for r := range m.latency {
		routes = append(routes, r)
	}
	sort.Strings(routes)
	for _, r := range routes {
		h := m.latency[r]
		for i, b := range latencyBuckets {
			fmt.Fprintf(w, "certbank_http_request_duration_seconds_bucket{route=%q,le=%q} %d\n", r, strings.TrimRight(strings.TrimRight(fmt.Sprintf("%f", b), "0"), "."), h.counts[i])
		}
		fmt.Fprintf(w, "certbank_http_request_duration_seconds_bucket{route=%q,le=\"+Inf\"} %d\n", r, h.n)
		fmt.Fprintf(w, "certbank_http_request_duration_seconds_sum{route=%q} %g\n", r, h.sum)
		fmt.Fprintf(w, "certbank_http_request_duration_seconds_count{route=%q} %d\n", r, h.n)
	}
	fmt.Fprintln(w, "# HELP certbank_quota_rejections_total Keyed requests refused by a tier limit.")
	fmt.Fprintln(w, "# TYPE certbank_quota_rejections_total counter")
	for _, k := range []string{"RATE_LIMITED", "MONTHLY_LIMIT_EXCEEDED"} {
		fmt.Fprintf(w, "certbank_quota_rejections_total{kind=%q} %d\n", k, m.rejected[k])
	}
	fmt.Fprintln(w, "# HELP certbank_store_errors_total Store operations that failed.")
	fmt.Fprintln(w, "# TYPE certbank_store_errors_total counter")
	fmt.Fprintf(w, "certbank_store_errors_total %d\n", m.storeErrs)
	fmt.Fprintln(w, "# HELP certbank_usage_batches_total Usage transactions of the group commit (their mean size is requests / batches).")
	fmt.Fprintln(w, "# TYPE certbank_usage_batches_total counter")
	fmt.Fprintf(w, "certbank_usage_batches_total %d\n", m.batches)
	fmt.Fprintln(w, "# HELP certbank_usage_batch_requests_total Requests accounted by the group commit.")
	fmt.Fprintln(w, "# TYPE certbank_usage_batch_requests_total counter")
	fmt.Fprintf(w, "certbank_usage_batch_requests_total %d\n", m.batched)
	fmt.Fprintln(w, "# HELP certbank_payments_total Pay-per-request payments by outcome.")
	fmt.Fprintln(w, "# TYPE certbank_payments_total counter")
	for _, k := range []string{"settled", "failed", "pending", "refused"} {
		fmt.Fprintf(w, "certbank_payments_total{outcome=%q} %d\n", k, m.payments[k])
	}
}
