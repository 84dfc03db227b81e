package integration_test

// Integration tests of the service under failure: a real `certbank serve`
// process killed with SIGKILL mid-load must have stored every 200 it sent;
// PostgreSQL going away mid-load gives 503 UNAVAILABLE (never an uncounted
// 200) and the service recovers by itself when it returns.
//
// They build cmd/certbank once per test binary (the build cache makes that
// quick after the first time) and a small synthetic site with
// generator/synth. Every target is 127.0.0.1; every test is bounded in time
// and requests.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator/synth"
	"github.com/certbank/certbank/paywall/postgres"
	"github.com/certbank/certbank/paywall/sqlite"
	"github.com/certbank/certbank/paywall/store"
)

// ---- the certbank binary and a built synthetic site ----

var (
	itOnce                sync.Once
	itBin, itPub, itBank  string
	itErr                 error
	itDir                 string
	itCertSlug, itHubPath string
)

// itSite builds cmd/certbank and a synthetic site (3 certifications × 40
// questions) once per test binary, returning the binary, the public
// directory and the bank bundle.
func itSite(t testing.TB) (bin, public, bank string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs certbank serve processes; skipped with -short")
	}
	itOnce.Do(func() {
		itDir, itErr = os.MkdirTemp("", "certbank-it-")
		if itErr != nil {
			return
		}
		root, err := filepath.Abs("..")
		if err != nil {
			itErr = err
			return
		}
		goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goBin); err != nil {
			goBin = "go"
		}
		itBin = filepath.Join(itDir, "certbank")
		build := exec.Command(goBin, "build", "-o", itBin, "./cmd/certbank")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			itErr = fmt.Errorf("go build ./cmd/certbank: %v\n%s", err, out)
			return
		}
		content := filepath.Join(itDir, "content")
		if itErr = synth.Write(content, 3, 40, 11); itErr != nil {
			return
		}
		itPub, itBank = filepath.Join(itDir, "public"), filepath.Join(itDir, "bank.json")
		if out, err := exec.Command(itBin, "build", "--content", content, "--out", itPub, "--bank", itBank).CombinedOutput(); err != nil {
			itErr = fmt.Errorf("certbank build: %v\n%s", err, out)
			return
		}
		itCertSlug = certbank.Slugs[0]
		itHubPath = "/certifications/" + itCertSlug + "/"
	})
	if itErr != nil {
		t.Fatal(itErr)
	}
	return itBin, itPub, itBank
}

// TestMain removes the shared build directory after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if itDir != "" {
		os.RemoveAll(itDir)
	}
	os.Exit(code)
}

// itDeadFacilitator makes serve settle through a facilitator that is not
// there instead of starting the development chain: these tests never pay,
// and the 402 challenge needs no facilitator.
const itDeadFacilitator = "http://127.0.0.1:9"

// lockedBuffer collects a process's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// itProc is a running `certbank serve`.
type itProc struct {
	cmd  *exec.Cmd
	addr string
	base string
	out  *lockedBuffer
	done chan struct{}
}

func itFreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// itServe starts `certbank serve` on a free loopback port with args and
// waits (up to 30 s) for /readyz to answer 200. The process is killed at
// the end of the test.
func itServe(t testing.TB, bin string, args ...string) *itProc {
	t.Helper()
	addr := itFreeAddr(t)
	p := &itProc{addr: addr, base: "http://" + addr, out: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, append([]string{"serve", "--addr", addr, "--log-level", "warn"}, args...)...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.kill() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-p.done:
			t.Fatalf("certbank serve exited before it was ready:\n%s", p.out)
		default:
		}
		if res, err := http.Get(p.base + "/readyz"); err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == 200 {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("certbank serve not ready after 30s:\n%s", p.out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill ends the process with SIGKILL (no graceful shutdown) and waits.
func (p *itProc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// ---- SIGKILL mid-load ----

// itLoad drives GET /api/v1/questions?limit=5 with keys[i % len] from
// workers goroutines until stop is closed, counting per key the 200s
// received (counted when the status line arrives: the service sends it
// only after the usage is committed) and the requests that failed after
// they may have reached the server (not dial errors).
type itLoad struct {
	ok, maybe, other []atomic.Int64
	wg               sync.WaitGroup
	stop             chan struct{}
	killed           atomic.Int64 // unix ns of the kill, 0 before
}

func itStartLoad(base string, keys []string, workers int) *itLoad {
	l := &itLoad{ok: make([]atomic.Int64, len(keys)), maybe: make([]atomic.Int64, len(keys)), other: make([]atomic.Int64, len(keys)), stop: make(chan struct{})}
	for w := range workers {
		l.wg.Go(func() {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: 10 * time.Second}
			defer client.CloseIdleConnections()
			for i := w; ; i += workers {
				select {
				case <-l.stop:
					return
				default:
				}
				k := i % len(keys)
				req, _ := http.NewRequest("GET", base+"/api/v1/questions?limit=5", nil)
				req.Header.Set("x-api-key", keys[k])
				start := time.Now().UnixNano()
				res, err := client.Do(req)
				if err != nil {
					// A request sent before the kill may have been
					// committed (net/http even retries it on a new
					// connection, which then fails to dial); one sent
					// after it reached nobody.
					if killed := l.killed.Load(); killed == 0 || start < killed {
						l.maybe[k].Add(1)
					}
					time.Sleep(5 * time.Millisecond)
					continue
				}
				if res.StatusCode == 200 {
					l.ok[k].Add(1)
				} else {
					l.other[k].Add(1)
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		})
	}
	return l
}

func (l *itLoad) end() { close(l.stop); l.wg.Wait() }

func (l *itLoad) total(c []atomic.Int64) int64 {
	var n int64
	for i := range c {
		n += c[i].Load()
	}
	return n
}

// TestKillMidLoadCountsEvery200 runs a keyed load against a real certbank
// serve, SIGKILLs it mid-run, restarts it on the same database and checks
// that the usage stored for each key covers every 200 the client received:
// at least that many, and at most that many plus the requests that were
// cut off by the kill (those were answered by nobody, but may have been
// committed just before the process died).
func TestKillMidLoadCountsEvery200(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			bin, pub, bank := itSite(t)
			ctx := context.Background()
			var dbArg string
			var store store.Store
			var err error
			switch kind {
			case "sqlite":
				path := filepath.Join(t.TempDir(), "certbank.db")
				dbArg = "sqlite:" + path
				store, err = sqlite.Open(ctx, path)
			case "postgres":
				dbArg = ltPGDSN(t)
				store, err = postgres.Open(ctx, dbArg)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			keys, ids := make([]string, 40), make([]string, 40)
			for i := range keys {
				keys[i], ids[i] = ltKey(t, store, certbank.TierEnterprise, time.Now())
			}
			month := time.Now().UTC().Format("2006-01")
			args := []string{"--public", pub, "--bank", bank, "--database", dbArg, "--facilitator", itDeadFacilitator}

			p := itServe(t, bin, args...)
			load := itStartLoad(p.base, keys, 16)
			deadline := time.Now().Add(10 * time.Second)
			for load.total(load.ok) < 300 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond) // well inside the run
			load.killed.Store(time.Now().UnixNano())
			p.kill()
			time.Sleep(100 * time.Millisecond)
			load.end()
			ok, cut := load.total(load.ok), load.total(load.maybe)
			if ok < 300 {
				t.Fatalf("only %d requests succeeded before the kill:\n%s", ok, p.out)
			}

			p2 := itServe(t, bin, args...)
			var stored, exact int64
			for i, id := range ids {
				n, _, err := store.MonthlyUsage(ctx, id, month)
				if err != nil {
					t.Fatal(err)
				}
				got, sent, maybe := int64(n), load.ok[i].Load(), load.maybe[i].Load()
				if got < sent || got > sent+maybe {
					t.Errorf("key %d: stored %d requests; the client received %d × 200 and %d requests were cut off by the kill", i, got, sent, maybe)
				}
				if got == sent {
					exact++
				}
				if u := ltUsage(t, p2.base, keys[i]); int64(u.Requests.Month.Used) != got {
					t.Errorf("key %d: the restarted service reports %d requests, the store %d", i, u.Requests.Month.Used, got)
				}
				stored += got
			}
			t.Logf("%s: %d × 200 received, %d stored, %d requests cut off by SIGKILL; stored = received exactly for %d of %d keys",
				kind, ok, stored, cut, exact, len(keys))
		})
	}
}

// ---- PostgreSQL going away ----

// itProxy is a TCP proxy to PostgreSQL that can drop every connection and
// refuse new ones, as a stopped server would, without touching the server.
type itProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

func itStartProxy(t *testing.T, target string) *itProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &itProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.serve)
	t.Cleanup(func() {
		ln.Close()
		p.setDown(true)
		p.wg.Wait()
	})
	return p
}

func (p *itProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		// Checking down and registering the connection under one lock
		// means setDown can never miss a connection being set up.
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close() // refused: the server is "stopped"
			continue
		}
		s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c], p.conns[s] = struct{}{}, struct{}{}
		p.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			io.Copy(dst, src)
			dst.Close()
			src.Close()
			p.mu.Lock()
			delete(p.conns, dst)
			delete(p.conns, src)
			p.mu.Unlock()
		}
		p.wg.Go(func() { pipe(s, c) })
		p.wg.Go(func() { pipe(c, s) })
	}
}

// setDown drops every connection and refuses new ones (true), or lets
// them through again (false).
func (p *itProxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for c := range p.conns {
			c.Close()
		}
	}
}

// TestPostgresOutage runs a keyed load against a service whose PostgreSQL
// connections go through a proxy, makes PostgreSQL unreachable mid-run and
// brings it back: meanwhile every request is answered 503 with code
// UNAVAILABLE and Retry-After, /readyz answers 503, no 200 goes uncounted,
// and the service recovers by itself.
func TestPostgresOutage(t *testing.T) {
	dsn := ltPGDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	if u.Port() == "" {
		target = net.JoinHostPort(u.Hostname(), "5432")
	}
	proxy := itStartProxy(t, target)
	u.Host = proxy.ln.Addr().String()
	q := u.Query()
	q.Set("connect_timeout", "3")
	u.RawQuery = q.Encode()
	ctx := context.Background()
	direct, err := postgres.Open(ctx, dsn) // checks the stored usage, past the proxy
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	proxied, err := postgres.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer proxied.Close()
	in := ltStart(t, testBank(30), proxied, nil)
	keys, ids := make([]string, 8), make([]string, 8)
	for i := range keys {
		keys[i], ids[i] = ltKey(t, direct, certbank.TierEnterprise, time.Now())
	}

	type outcome struct {
		phase  int
		status int
		code   string
		msg    string
		retry  string
	}
	var mu sync.Mutex
	var outcomes []outcome
	var phase atomic.Int32
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := w; ; i += 6 {
				select {
				case <-stop:
					return
				default:
				}
				ph := int(phase.Load())
				r, err := ltGet(in.http.URL, "/api/v1/questions?limit=1", keys[i%len(keys)])
				if err != nil {
					t.Errorf("phase %d: %v", ph, err)
					return
				}
				mu.Lock()
				outcomes = append(outcomes, outcome{ph, r.status, r.code, r.msg, r.header.Get("Retry-After")})
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
	ready := func() int {
		res, err := http.Get(in.http.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			var m map[string]string
			if json.Unmarshal(body, &m) != nil || m["code"] != "UNAVAILABLE" {
				t.Errorf("/readyz %d with body %s", res.StatusCode, body)
			}
		}
		return res.StatusCode
	}

	time.Sleep(400 * time.Millisecond) // phase 0: up
	phase.Store(1)
	proxy.setDown(true)
	time.Sleep(100 * time.Millisecond) // requests in flight at the cut finish
	phase.Store(2)                     // down, for longer than the key cache lasts
	time.Sleep(1500 * time.Millisecond)
	if s := ready(); s != 503 {
		t.Errorf("/readyz answers %d while PostgreSQL is unreachable, want 503", s)
	}
	phase.Store(3) // requests started while down finish before it is back
	time.Sleep(100 * time.Millisecond)
	proxy.setDown(false)
	deadline := time.Now().Add(15 * time.Second)
	for ready() != 200 {
		if time.Now().After(deadline) {
			t.Fatal("/readyz did not recover within 15s of PostgreSQL's return")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // the pool reconnects
	phase.Store(4)
	time.Sleep(500 * time.Millisecond) // up again
	close(stop)
	wg.Wait()

	count := map[int]map[string]int{}
	var ok, unavailable int64
	for _, o := range outcomes {
		k := fmt.Sprint(o.status)
		if o.code != "" {
			k += " " + o.code
		}
		if count[o.phase] == nil {
			count[o.phase] = map[string]int{}
		}
		count[o.phase][k]++
		switch {
		case o.status == 200:
			ok++
		case o.status == 503 && o.code == "UNAVAILABLE" && o.retry != "":
			unavailable++
			if !strings.Contains(o.msg, "unavailable") || !strings.Contains(o.msg, "retry") {
				t.Errorf("503 message %q does not say the service is unavailable and to retry", o.msg)
			}
		default:
			t.Errorf("phase %d: %d %s (Retry-After %q); want 200, or 503 UNAVAILABLE with Retry-After", o.phase, o.status, o.code, o.retry)
		}
	}
	t.Logf("outcomes by phase (0 up, 1 cut, 2 down, 3 coming back, 4 up): %v", count)
	if count[0]["200"] == 0 || count[4]["200"] == 0 {
		t.Errorf("no 200s before the outage or after recovery: %v", count)
	}
	if n := count[2]["200"]; n > 0 || count[2]["503 UNAVAILABLE"] == 0 {
		t.Errorf("while PostgreSQL was unreachable: %v; want only 503 UNAVAILABLE", count[2])
	}
	if len(count[4]) != 1 {
		t.Errorf("after recovery: %v; want only 200s", count[4])
	}
	var stored int64
	for _, id := range ids {
		n, _, err := direct.MonthlyUsage(ctx, id, time.Now().UTC().Format("2006-01"))
		if err != nil {
			t.Fatal(err)
		}
		stored += int64(n)
	}
	// A commit whose acknowledgement was lost with the connection is
	// answered 503 yet stored: stored may exceed the 200s, never fall short.
	if stored < ok || stored > ok+unavailable {
		t.Errorf("stored %d requests; %d × 200 and %d × 503 were answered", stored, ok, unavailable)
	}
	t.Logf("%d × 200, %d × 503 UNAVAILABLE, %d stored", ok, unavailable, stored)
	if !strings.Contains(fmt.Sprint(count), "503") {
		t.Error("the outage produced no 503")
	}
}
