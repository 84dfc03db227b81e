package integration_test

// deploy/nginx.conf in front of two `certbank serve` instances that share
// PostgreSQL: Debian's nginx runs in the foreground with a temporary prefix
// and configuration on a random loopback port (the system's nginx is never
// touched), and the static and dynamic paths are checked through it.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// itNginx returns the nginx binary, or skips the test (fails it when
// CERTBANK_REQUIRE_NGINX=1).
func itNginx(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"nginx", "/usr/sbin/nginx"} {
		if bin, err := exec.LookPath(p); err == nil {
			return bin
		}
	}
	msg := "nginx is not installed (Debian: apt-get install -y nginx-light, or make deps); set CERTBANK_REQUIRE_NGINX=1 to make this a failure"
	if os.Getenv("CERTBANK_REQUIRE_NGINX") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// itNginxConfig rewrites deploy/nginx.conf for the test: the listen lines
// become one loopback address, root the test's public directory, the
// upstream servers the test's instances, and log files go under prefix.
func itNginxConfig(t *testing.T, listen, root, prefix string, upstreams []string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "deploy", "nginx.conf"))
	if err != nil {
		t.Fatal(err)
	}
	conf := string(data)
	replace := func(re, with string, want int) {
		t.Helper()
		r := regexp.MustCompile(re)
		if n := len(r.FindAllStringIndex(conf, -1)); n < want {
			t.Fatalf("deploy/nginx.conf: %d lines match %s, want at least %d (the test rewrites them)", n, re, want)
		}
		first := true
		conf = r.ReplaceAllStringFunc(conf, func(string) string {
			if first {
				first = false
				return with
			}
			return ""
		})
	}
	replace(`(?m)^[ \t]*listen [^;#\n]*;[ \t]*\n`, "    listen "+listen+";\n", 1)
	replace(`(?m)^[ \t]*root [^;\n]*;`, "    root "+root+";", 1)
	var servers strings.Builder
	for _, u := range upstreams {
		fmt.Fprintf(&servers, "    server %s max_fails=3 fail_timeout=10s;\n", u)
	}
	replace(`(?m)^[ \t]*server 127\.0\.0\.1:\d+[^;\n]*;[ \t]*\n`, servers.String(), 2)
	conf = strings.ReplaceAll(conf, "/var/log/nginx/", prefix+"/")
	main := fmt.Sprintf(`worker_processes 1;
error_log %[1]s/error.log warn;
pid %[1]s/nginx.pid;
events { worker_connections 256; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    include %[1]s/certbank.conf;
}
`, prefix)
	if err := os.WriteFile(filepath.Join(prefix, "certbank.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(path, []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type itHTTP struct {
	status int
	header http.Header
	body   []byte
}

func itDo(t *testing.T, method, url, key, body string, header ...string) itHTTP {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return itHTTP{res.StatusCode, res.Header, b}
}

// TestNginxInFrontOfTwoInstances serves the site through deploy/nginx.conf
// with two instances behind it sharing PostgreSQL.
func TestNginxInFrontOfTwoInstances(t *testing.T) {
	nginx := itNginx(t)
	dsn := ltPGDSN(t)
	bin, pub, bank := itSite(t)
	args := []string{"--public", pub, "--bank", bank, "--database", dsn, "--trust-proxy", "--facilitator", itDeadFacilitator}
	a := itServe(t, bin, args...)
	b := itServe(t, bin, args...)

	prefix := t.TempDir()
	// nginx started by root serves as an unprivileged worker user: let it
	// read the site and use its temporary directories.
	for _, d := range []string{prefix, filepath.Dir(pub)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	listen := itFreeAddr(t)
	conf := itNginxConfig(t, listen, pub, prefix, []string{a.addr, b.addr})
	out := &lockedBuffer{}
	cmd := exec.Command(nginx, "-p", prefix, "-c", conf, "-e", filepath.Join(prefix, "error.log"), "-g", "daemon off;")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt) // fast shutdown
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(prefix, "error.log"))
			t.Logf("nginx output:\n%s\nerror.log:\n%s", out, log)
		}
	})
	base := "http://" + listen
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-done:
			log, _ := os.ReadFile(filepath.Join(prefix, "error.log"))
			t.Fatalf("nginx exited:\n%s\n%s", out, log)
		default:
		}
		if res, err := http.Get(base + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx not answering /healthz after 10s:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Static paths come from disk: the service marks every response it
	// serves with X-Request-Id, nginx's static files have none.
	for _, c := range []struct{ path, ctype, contains string }{
		{"/", "text/html", "<html"},
		{itHubPath, "text/html", "<html"},
		{"/catalog.json", "application/json", `"certifications"`},
		{"/api/" + itCertSlug + "/questions-free.json", "application/json", `"questions"`},
		{"/.well-known/x402", "application/json", "{"},
		{"/assets/site.css", "text/css", ""},
	} {
		r := itDo(t, "GET", base+c.path, "", "")
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), c.ctype) || !strings.Contains(string(r.body), c.contains) {
			t.Errorf("GET %s: %d %s, %d bytes; want 200 %s containing %q", c.path, r.status, r.header.Get("Content-Type"), len(r.body), c.ctype, c.contains)
		}
		if id := r.header.Get("X-Request-Id"); id != "" {
			t.Errorf("GET %s was answered by an instance (X-Request-Id %s), not from disk", c.path, id)
		}
		if r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no X-Content-Type-Options: nosniff", c.path)
		}
	}
	if r := itDo(t, "GET", base+"/catalog.json", "", ""); r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("/catalog.json lacks Access-Control-Allow-Origin: *")
	}
	if r := itDo(t, "GET", base+strings.TrimSuffix(itHubPath, "/"), "", ""); r.status != 301 || r.header.Get("Location") != itHubPath {
		t.Errorf("GET %s: %d Location %q; want 301 to %s", strings.TrimSuffix(itHubPath, "/"), r.status, r.header.Get("Location"), itHubPath)
	}
	if r := itDo(t, "GET", base+"/no/such/page", "", ""); r.status != 404 || !strings.Contains(r.header.Get("Content-Type"), "text/html") {
		t.Errorf("GET /no/such/page: %d %s; want the site's 404 page", r.status, r.header.Get("Content-Type"))
	}
	for _, p := range []string{"/metrics", "/readyz"} {
		if r := itDo(t, "GET", base+p, "", ""); r.status != 404 {
			t.Errorf("GET %s through nginx: %d, want 404 (instance-only)", p, r.status)
		}
	}

	// Dynamic paths reach the instances.
	r := itDo(t, "POST", base+"/api/v1/signup", "", `{"name":"Ada","email":"ada@example.com"}`)
	var signup struct {
		Key string `json:"api_key"`
	}
	if r.status != 201 || json.Unmarshal(r.body, &signup) != nil || signup.Key == "" || r.header.Get("X-Request-Id") == "" {
		t.Fatalf("signup through nginx: %d %s", r.status, r.body)
	}
	served := 0
	for i := range 4 {
		path := "/api/v1/questions?limit=3"
		if i%2 == 1 {
			path = "/functions/v1/api-v1-questions?limit=3"
		}
		r := itDo(t, "GET", base+path, signup.Key, "")
		var env struct {
			Data []json.RawMessage `json:"data"`
		}
		if r.status != 200 || json.Unmarshal(r.body, &env) != nil || len(env.Data) != 3 {
			t.Errorf("GET %s through nginx: %d %s", path, r.status, r.body)
		} else {
			served++
		}
	}
	// Round robin spread them over both instances; the usage is shared.
	for _, in := range []*itProc{a, b} {
		if n := itRouteCount(t, in.base, "questions", 200); n == 0 {
			t.Errorf("instance %s served no questions: the upstream does not spread requests", in.addr)
		}
	}
	if u := ltUsage(t, base, signup.Key); u.Requests.Month.Used != served {
		t.Errorf("usage through nginx: %d requests, want %d", u.Requests.Month.Used, served)
	}
	if r := itDo(t, "GET", base+"/functions/v1/api-v1-usage", signup.Key, ""); r.status != 200 {
		t.Errorf("usage on the functions path: %d %s", r.status, r.body)
	}
	x := itDo(t, "GET", base+"/api/v1/x402?certification="+itCertSlug+"&limit=10", "", "")
	if x.status != 402 || x.header.Get("PAYMENT-REQUIRED") == "" {
		t.Errorf("x402 through nginx: %d, PAYMENT-REQUIRED %q: %.300s", x.status, x.header.Get("PAYMENT-REQUIRED"), x.body)
	}
	if r := itDo(t, "GET", base+"/api/mcp/server-card", "", ""); r.status != 200 || r.header.Get("X-Request-Id") == "" {
		t.Errorf("MCP server card through nginx: %d (X-Request-Id %q)", r.status, r.header.Get("X-Request-Id"))
	}
	mcp := itDo(t, "POST", base+"/api/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		"Accept", "application/json, text/event-stream")
	if mcp.header.Get("X-Request-Id") == "" || mcp.status >= 500 {
		t.Errorf("POST /api/mcp did not reach an instance: %d %.300s", mcp.status, mcp.body)
	}

	// X-Forwarded-For is overwritten by nginx: a client cannot dodge the
	// signup limit per address (5 an hour; one signup is above) by sending
	// its own.
	for i := range 5 {
		r := itDo(t, "POST", base+"/api/v1/signup", "", fmt.Sprintf(`{"name":"B","email":"b%d@example.com"}`, i),
			"X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i))
		want := 201
		if i == 4 {
			want = 429
		}
		if r.status != want {
			t.Errorf("signup %d with a forged X-Forwarded-For: %d, want %d: %s", i+2, r.status, want, r.body)
		}
	}
	// Body limits: nginx refuses what no endpoint accepts.
	if r := itDo(t, "POST", base+"/api/v1/signup", "", `{"name":"`+strings.Repeat("x", 64<<10)+`"}`); r.status != 413 {
		t.Errorf("a 64 KB signup body: %d, want 413 from nginx", r.status)
	}
}

// itRouteCount reads certbank_http_requests_total for a route and status
// from an instance's /metrics.
func itRouteCount(t *testing.T, base, route string, status int) int {
	t.Helper()
	r := itDo(t, "GET", base+"/metrics", "", "")
	re := regexp.MustCompile(fmt.Sprintf(`(?m)^certbank_http_requests_total\{route="%s",status="%d"\} (\d+)$`, route, status))
	m := re.FindStringSubmatch(string(r.body))
	if m == nil {
		return 0
	}
	var n int
	fmt.Sscan(m[1], &n)
	return n
}
