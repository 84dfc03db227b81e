// Command loadtest is certbank's service benchmark (make bench-service).
//
// In one run it writes a synthetic content tree (generator/synth: 26
// certifications × 500 verified questions = 13,000), builds it with
// `certbank build`, creates 1,000 Enterprise keys directly in each store,
// and then, for each configuration in turn — usage accounting switched off
// (the hidden serve flag --accounting-off), SQLite, PostgreSQL — starts
// `certbank serve --public DIR --bank FILE --database …` as a separate
// process, measures the time from process start to /readyz 200, drives
// GET /api/v1/questions?limit=10 with a valid key over -c keep-alive
// connections for -d (after a -warmup), and reports requests per second,
// p50/p90/p99/max latency, the server's CPU per request, its peak RSS
// (VmHWM), and checks that the usage stored equals the number of 200
// responses received.
//
// The load generator is deliberately lean (raw HTTP/1.1 over net.Conn, no
// allocation per request) because it shares the machine's cores with the
// server.
//
// Load only, against a running server:
//
//	go run ./loadtest -url http://127.0.0.1:8080/api/v1/questions?limit=10 -keyfile keys.txt -c 50 -d 10s
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type options struct {
	bin      string
	work     string
	keep     bool
	conns    int
	duration time.Duration
	warmup   time.Duration
	keys     int
	pgDSN    string
	configs  string
	path     string
	rounds   int
	certs    int
	perCert  int
	url      string
	keyfile  string
	perfDir  string
	payRate  float64
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "bin/certbank", "certbank binary to benchmark")
	flag.StringVar(&o.work, "work", "", "work directory (default: a temporary one, removed afterwards)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary work directory")
	flag.IntVar(&o.conns, "c", 50, "concurrent keep-alive connections")
	flag.DurationVar(&o.duration, "d", 10*time.Second, "measured duration per configuration")
	flag.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured load before each measurement")
	flag.IntVar(&o.keys, "keys", 1000, "Enterprise keys to spread the requests over")
	flag.StringVar(&o.pgDSN, "pg", envOr("CERTBANK_TEST_POSTGRES", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL URL (a fresh schema is created and dropped); empty skips PostgreSQL")
	flag.StringVar(&o.configs, "configs", "off,sqlite,postgres", "configurations to run, in order")
	flag.StringVar(&o.path, "path", "/api/v1/questions?limit=10", "request path")
	flag.IntVar(&o.rounds, "rounds", 1, "repeat the configurations this many times (A/B/C, A/B/C, …)")
	flag.IntVar(&o.certs, "certs", 26, "synthetic certifications")
	flag.IntVar(&o.perCert, "per-cert", 500, "synthetic questions per certification")
	flag.StringVar(&o.url, "url", "", "load only: the URL to request (with -keyfile)")
	flag.StringVar(&o.keyfile, "keyfile", "", "load only: file of API keys, one a line")
	flag.Float64Var(&o.payRate, "pay-rate", 0, "paid mode: send this many pre-signed x402 payments a second to certbank serve on the development chain (see pay.go)")
	flag.StringVar(&o.perfDir, "perf", "", "record each measured run with `perf record -g` into this directory (needs perf)")
	flag.Parse()
	var err error
	switch {
	case o.url != "":
		err = loadOnly(o)
	case o.payRate > 0:
		err = payBench(context.Background(), o)
	default:
		err = bench(context.Background(), o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func loadOnly(o options) error {
	data, err := os.ReadFile(o.keyfile)
	if err != nil {
		return err
	}
	keys := strings.Fields(string(data))
	if len(keys) == 0 {
		return errors.New("no keys in -keyfile")
	}
	u, err := url.Parse(o.url)
	if err != nil {
		return err
	}
	if o.warmup > 0 {
		Run(u.Host, u.RequestURI(), keys, o.conns, o.warmup)
	}
	r := Run(u.Host, u.RequestURI(), keys, o.conns, o.duration)
	fmt.Println(r)
	return nil
}

// Result is one measured load.
type Result struct {
	Requests int64
	Status   map[int]int64
	Errors   int64 // transport errors (the connection is reopened)
	Bytes    int64
	Elapsed  time.Duration
	P50, P90 time.Duration
	P99, Max time.Duration
}

func (r Result) RPS() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

func (r Result) OK() int64 { return r.Status[200] }

func (r Result) String() string {
	codes := make([]int, 0, len(r.Status))
	for c := range r.Status {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	var st []string
	for _, c := range codes {
		st = append(st, fmt.Sprintf("%d×%d", r.Status[c], c))
	}
	return fmt.Sprintf("%d requests in %s: %.0f req/s, p50 %s p90 %s p99 %s max %s, %.1f KB/response, status %s, %d transport errors",
		r.Requests, r.Elapsed.Round(time.Millisecond), r.RPS(), ms(r.P50), ms(r.P90), ms(r.P99), ms(r.Max),
		float64(r.Bytes)/float64(max(r.Requests, 1))/1024, strings.Join(st, " "), r.Errors)
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 2, 64) + "ms"
}

// Run drives GET path on addr (host:port) over conns keep-alive
// connections for d, each request with a key drawn at random from keys.
func Run(addr, path string, keys []string, conns int, d time.Duration) Result {
	reqs := make([][]byte, len(keys))
	for i, k := range keys {
		reqs[i] = []byte("GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nUser-Agent: certbank-loadtest\r\nX-Api-Key: " + k + "\r\n\r\n")
	}
	var wg sync.WaitGroup
	lats := make([][]uint32, conns)
	statuses := make([]map[int]int64, conns)
	var errs, nbytes atomic.Int64
	start := time.Now()
	deadline := start.Add(d)
	for i := range conns {
		wg.Go(func() {
			c := &client{addr: addr}
			defer c.close()
			rnd := rand.New(rand.NewPCG(uint64(i), uint64(start.UnixNano())))
			lat := make([]uint32, 0, 1<<16)
			st := map[int]int64{}
			for {
				t0 := time.Now()
				if !t0.Before(deadline) {
					break
				}
				status, n, err := c.do(reqs[rnd.IntN(len(reqs))])
				if err != nil {
					errs.Add(1)
					c.close()
					time.Sleep(time.Millisecond)
					continue
				}
				lat = append(lat, uint32(time.Since(t0).Microseconds()))
				st[status]++
				nbytes.Add(int64(n))
			}
			lats[i], statuses[i] = lat, st
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []uint32
	r := Result{Status: map[int]int64{}, Errors: errs.Load(), Bytes: nbytes.Load(), Elapsed: elapsed}
	for i := range conns {
		all = append(all, lats[i]...)
		for s, n := range statuses[i] {
			r.Status[s] += n
		}
	}
	r.Requests = int64(len(all))
	if len(all) > 0 {
		slices.Sort(all)
		pct := func(p float64) time.Duration {
			return time.Duration(all[min(len(all)-1, int(p*float64(len(all))))]) * time.Microsecond
		}
		r.P50, r.P90, r.P99 = pct(0.50), pct(0.90), pct(0.99)
		r.Max = time.Duration(all[len(all)-1]) * time.Microsecond
	}
	return r
}

// client is one keep-alive HTTP/1.1 connection that reads responses
// without allocating: status code, Content-Length or chunked body, which it
// discards.
type client struct {
	addr string
	conn net.Conn
	br   *bufio.Reader
}

func (c *client) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

func (c *client) do(req []byte) (status, n int, err error) {
	if c.conn == nil {
		conn, err := net.DialTimeout("tcp", c.addr, 5*time.Second)
		if err != nil {
			return 0, 0, err
		}
		c.conn = conn
		if c.br == nil {
			c.br = bufio.NewReaderSize(conn, 64<<10)
		} else {
			c.br.Reset(conn)
		}
	}
	c.conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.conn.Write(req); err != nil {
		return 0, 0, err
	}
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, 0, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, 0, fmt.Errorf("bad status line %q", line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, 0, fmt.Errorf("bad status line %q", line)
	}
	length, chunked, closing := -1, false, false
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return 0, 0, err
		}
		if len(line) <= 2 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			length, err = strconv.Atoi(string(value))
			if err != nil {
				return 0, 0, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			closing = bytes.EqualFold(value, []byte("close"))
		}
	}
	switch {
	case chunked:
		for {
			line, err := c.br.ReadSlice('\n')
			if err != nil {
				return 0, 0, err
			}
			hex, _, _ := bytes.Cut(bytes.TrimSpace(line), []byte(";"))
			size, err := strconv.ParseInt(string(hex), 16, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("bad chunk size %q", line)
			}
			if size == 0 {
				for { // trailers
					line, err := c.br.ReadSlice('\n')
					if err != nil {
						return 0, 0, err
					}
					if len(line) <= 2 {
						break
					}
				}
				break
			}
			if _, err := c.br.Discard(int(size) + 2); err != nil {
				return 0, 0, err
			}
			n += int(size)
		}
	case length >= 0:
		if _, err := c.br.Discard(length); err != nil {
			return 0, 0, err
		}
		n = length
	default:
		closing = true
		m, _ := io.Copy(io.Discard, c.br)
		n = int(m)
	}
	if closing {
		c.close()
	}
	return status, n, nil
}

// startServer starts `bin serve` with args and waits for /readyz 200,
// returning the process and the time it took from the start.
type server struct {
	cmd    *exec.Cmd
	addr   string
	ready  time.Duration
	stderr *bytes.Buffer
	done   chan error
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func startServer(bin string, args ...string) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	s := &server{addr: addr, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	s.cmd = exec.Command(bin, append([]string{"serve", "--addr", addr, "--log-level", "warn"}, args...)...)
	s.cmd.Stdout = io.Discard
	s.cmd.Stderr = s.stderr
	hc := &http.Client{Timeout: time.Second}
	start := time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.done <- s.cmd.Wait() }()
	for {
		select {
		case err := <-s.done:
			return nil, fmt.Errorf("certbank serve exited before it was ready: %v\n%s", err, s.stderr)
		default:
		}
		res, err := hc.Get("http://" + addr + "/readyz")
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == 200 {
				s.ready = time.Since(start)
				return s, nil
			}
		}
		if time.Since(start) > 60*time.Second {
			s.kill()
			return nil, fmt.Errorf("certbank serve not ready after 60s\n%s", s.stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (s *server) kill() {
	s.cmd.Process.Kill()
	<-s.done
}

// stop ends the server with SIGTERM (a graceful shutdown).
func (s *server) stop() error {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		return err
	case <-time.After(40 * time.Second):
		s.cmd.Process.Kill()
		return fmt.Errorf("certbank serve did not stop within 40s")
	}
}

// procStats reads the peak and current RSS (kB) and the CPU time of pid.
func procStats(pid int) (hwmKB, rssKB int64, cpu time.Duration) {
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && f[0] == "VmHWM:" {
				hwmKB, _ = strconv.ParseInt(f[1], 10, 64)
			}
			if len(f) >= 2 && f[0] == "VmRSS:" {
				rssKB, _ = strconv.ParseInt(f[1], 10, 64)
			}
		}
	}
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		s := string(data)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			f := strings.Fields(s[i+1:])
			if len(f) > 13 {
				ut, _ := strconv.ParseInt(f[11], 10, 64)
				st, _ := strconv.ParseInt(f[12], 10, 64)
				cpu = time.Duration(ut+st) * (time.Second / 100) // USER_HZ is 100 on Linux
			}
		}
	}
	return
}

// checkBody fetches one response with net/http and checks it is the
// questions envelope with 10 questions.
func checkBody(addr, path, key string) error {
	req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
	req.Header.Set("x-api-key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		return fmt.Errorf("GET %s: %d %s", path, res.StatusCode, body)
	}
	var env struct {
		Data []json.RawMessage `json:"data"`
		Meta struct {
			Returned int `json:"returned"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(body, &env); err != nil || len(env.Data) != 10 || env.Meta.Returned != 10 {
		return fmt.Errorf("GET %s: unexpected body (%v): %.300s", path, err, body)
	}
	return nil
}

func fileSize(paths ...string) int64 {
	var n int64
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}
