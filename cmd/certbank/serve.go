package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
	"github.com/certbank/certbank/paywall"
	"github.com/certbank/certbank/paywall/postgres"
	"github.com/certbank/certbank/paywall/quota"
	"github.com/certbank/certbank/paywall/sqlite"
	"github.com/certbank/certbank/paywall/store"
	"github.com/spf13/cobra"
)

type serveOptions struct {
	addr         string
	database     string
	content      string
	public       string
	bank         string
	baseURL      string
	functionsURL string
	mcpURL       string
	logLevel     string
	trustProxy   bool
	memoryLimit  string
	pay          payFlags
	// accountingOff serves keyed requests without recording usage or
	// applying limits: the baseline of the service benchmark (loadtest/),
	// never for production. Hidden flag.
	accountingOff bool
	// check prints the payment setup and exits (3 when unsafe) without serving.
	check bool
}

const defaultDatabase = "sqlite:.certbank/certbank.db"

func (a *app) newServeCmd() *cobra.Command {
	o := serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the site and the keyed, paid and MCP endpoints",
		Long: `With no flags, builds the site from content/ in memory and serves it and the
dynamic endpoints on 127.0.0.1:8080, with an SQLite database under .certbank/ and an
embedded development chain for pay-per-request. With --public DIR --bank FILE it
serves an existing build instead. Every flag has a CERTBANK_* environment variable.`,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.serve(cmd.Context(), o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", a.envDefault("CERTBANK_ADDR", "127.0.0.1:8080"), "listen address (env CERTBANK_ADDR)")
	f.StringVar(&o.database, "database", a.envDefault("CERTBANK_DATABASE", defaultDatabase), "sqlite:PATH or a postgres:// URL (env CERTBANK_DATABASE)")
	f.StringVar(&o.content, "content", a.envDefault("CERTBANK_CONTENT", "content"), "content directory to build from (env CERTBANK_CONTENT)")
	f.StringVar(&o.public, "public", a.envDefault("CERTBANK_PUBLIC_DIR", ""), "serve this existing build instead of building (needs --bank; env CERTBANK_PUBLIC_DIR)")
	f.StringVar(&o.bank, "bank", a.envDefault("CERTBANK_BANK_FILE", ""), "bank bundle of the existing build (env CERTBANK_BANK_FILE)")
	f.StringVar(&o.baseURL, "base-url", a.envDefault("CERTBANK_BASE_URL", ""), "public URL of the site, overriding site.yaml (env CERTBANK_BASE_URL)")
	f.StringVar(&o.functionsURL, "functions-url", a.envDefault("CERTBANK_FUNCTIONS_URL", ""), "public URL of the functions host (env CERTBANK_FUNCTIONS_URL)")
	f.StringVar(&o.mcpURL, "mcp-url", a.envDefault("CERTBANK_MCP_URL", ""), "public URL of the MCP host (env CERTBANK_MCP_URL)")
	f.StringVar(&o.logLevel, "log-level", a.envDefault("CERTBANK_LOG_LEVEL", "info"), "debug, info, warn or error (env CERTBANK_LOG_LEVEL)")
	f.BoolVar(&o.trustProxy, "trust-proxy", a.getenv("CERTBANK_TRUST_PROXY") == "true", "take client addresses from X-Forwarded-For (env CERTBANK_TRUST_PROXY=true)")
	f.StringVar(&o.memoryLimit, "memory-limit", a.envDefault("CERTBANK_MEMORY_LIMIT", "auto"),
		"soft limit of the Go heap: auto (sized from the loaded bank), off, or a size such as 256MiB; GOMEMLIMIT overrides it (env CERTBANK_MEMORY_LIMIT)")
	a.addPayFlags(f, &o.pay)
	f.BoolVar(&o.check, "check", false, "print the payment setup (network, asset, payee, backend) and exit; exit 3 when it is unsafe")
	f.BoolVar(&o.accountingOff, "accounting-off", false, "benchmark baseline only: serve keyed requests without recording usage or enforcing limits")
	_ = f.MarkHidden("accounting-off")
	return cmd
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, usagef("log level %q must be debug, info, warn or error", s)
	}
	return l, nil
}

// openStore opens the store named by a --database value.
func openStore(ctx context.Context, dsn string) (store.Store, string, error) {
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" {
			return nil, "", usagef("--database sqlite: needs a path, e.g. sqlite:.certbank/certbank.db")
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, "", err
		}
		db, err := sqlite.Open(ctx, path)
		return db, "sqlite " + path, err
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		db, err := postgres.Open(ctx, dsn)
		return db, "postgres", err
	}
	return nil, "", usagef("--database %q must be sqlite:PATH or a postgres:// URL", redact(dsn))
}

// redact hides a password in a URL for messages.
func redact(dsn string) string {
	if i := strings.Index(dsn, "://"); i >= 0 {
		if at := strings.Index(dsn[i+3:], "@"); at >= 0 {
			return dsn[:i+3] + "…@" + dsn[i+3+at+1:]
		}
	}
	return dsn
}

// site is a built site: public files and the bank.
type site struct {
	files map[string][]byte
	bank  *certbank.Bank
}

// source is what serve publishes before its URLs and payee are known:
// loaded content to build, or an existing build.
type source struct {
	content *generator.Content // nil for an existing build
	built   site
}

// settings are the site settings the payment plan is decided from.
func (s source) settings() *certbank.Site {
	if s.content != nil {
		return &s.content.Site
	}
	return &s.built.bank.Site
}

func (a *app) loadSource(o serveOptions) (source, error) {
	if o.public != "" || o.bank != "" {
		if o.public == "" || o.bank == "" {
			return source{}, usagef("--public and --bank go together: give both, or neither to build from --content")
		}
		f, err := os.Open(o.bank)
		if err != nil {
			return source{}, fmt.Errorf("open bank bundle: %w", err)
		}
		defer f.Close()
		bank, err := certbank.ReadBank(f)
		if err != nil {
			return source{}, err
		}
		files := map[string][]byte{}
		err = fs.WalkDir(os.DirFS(o.public), ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(filepath.Join(o.public, p))
			files[p] = data
			return err
		})
		if err != nil {
			return source{}, fmt.Errorf("read %s: %w", o.public, err)
		}
		return source{built: site{files, bank}}, nil
	}
	if st, err := os.Stat(o.content); err != nil || !st.IsDir() {
		return source{}, usagef("content directory %q not found; pass --content DIR or --public DIR --bank FILE", o.content)
	}
	c, err := generator.Load(os.DirFS(o.content), o.content)
	if err != nil {
		return source{}, err
	}
	return source{content: c}, nil
}

// urls are the public URLs a build writes into its documents.
type urls struct{ base, functions, mcp string }

// publicURLs decides the documents' absolute URLs: the flags first; else
// site.yaml's, except that a loopback URL (the development default) follows
// the address the service really listens on.
func publicURLs(o serveOptions, s *certbank.Site, listen net.Addr) urls {
	trim := func(u string) string { return strings.TrimRight(u, "/") }
	u := urls{trim(o.baseURL), trim(o.functionsURL), trim(o.mcpURL)}
	local := "http://" + listenHost(listen)
	pick := func(flag, fallback, yaml string) string {
		switch {
		case flag != "":
			return flag
		case fallback != "":
			return fallback
		case isLoopbackURL(yaml):
			return local
		}
		return yaml
	}
	u.base = pick(u.base, "", s.BaseURL)
	u.functions = pick(u.functions, trim(o.baseURL), s.FunctionsURL)
	u.mcp = pick(u.mcp, trim(o.baseURL), s.MCPURL)
	return u
}

// listenHost is host:port of a listener as a client reaches it: an
// unspecified address (":8080", "[::]:8080") is reached on 127.0.0.1.
func listenHost(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	if ta.IP == nil || ta.IP.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(ta.Port))
	}
	return ta.String()
}

// isLoopbackURL reports whether u points at this machine (localhost or a
// loopback IP), as site.yaml's development defaults do.
func isLoopbackURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return false
	}
	h := p.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// build renders the content with its final URLs and payee, or checks that
// an existing build agrees with them.
func (s source) build(u urls, payTo string) (site, error) {
	if s.content == nil {
		b := s.built.bank
		if !strings.EqualFold(b.Site.Payment.PayTo, payTo) {
			return site{}, usagef("the existing build is paid to %s, not %s: rebuild it with certbank build --pay-to %s, or serve from --content", b.Site.Payment.PayTo, payTo, payTo)
		}
		return s.built, nil
	}
	c := s.content
	c.Site.BaseURL, c.Site.FunctionsURL, c.Site.MCPURL = u.base, u.functions, u.mcp
	c.Site.Payment.PayTo = payTo
	out, err := generator.Build(c, generator.Options{})
	if err != nil {
		return site{}, err
	}
	return site{out.Files, out.Bank}, nil
}

func (a *app) serve(ctx context.Context, o serveOptions) error {
	if err := checkMemoryLimit(o.memoryLimit); err != nil {
		return err
	}
	level, err := parseLevel(o.logLevel)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(a.stderr, &slog.HandlerOptions{Level: level}))
	start := time.Now()
	src, err := a.loadSource(o)
	if err != nil {
		return err
	}
	plan := planPayment(o.pay, src.settings())
	if o.check {
		plan.write(a.stdout)
		if len(plan.Unsafe) > 0 {
			return checkFailed{fmt.Sprintf("the payment setup is unsafe (%d problem(s) above); serve would refuse to start", len(plan.Unsafe))}
		}
		return nil
	}
	if len(plan.Unsafe) > 0 {
		return plan.unsafeError()
	}
	// Listen before building, so that the documents' absolute URLs name the
	// address clients really reach.
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.addr, err)
	}
	defer ln.Close()
	st, err := src.build(publicURLs(o, src.settings(), ln.Addr()), plan.PayTo)
	if err != nil {
		return err
	}
	store, storeName, err := openStore(ctx, o.database)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer store.Close()
	pay, closePay, err := a.payConfig(ctx, o.pay, st.bank, log)
	if err != nil {
		return err
	}
	defer closePay()
	cfg := paywall.Config{Bank: st.bank, Static: st.files, Store: store, Pay: pay, Logger: log, TrustProxy: o.trustProxy}
	if o.accountingOff {
		cfg.Accountant = quota.Noop{} // the benchmark's baseline
	}
	srv, err := paywall.New(cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	// The server keeps what it needs of the bank, its text encoded once;
	// let the decoded questions go.
	questions, certs := len(st.bank.Questions), len(st.bank.Certifications)
	st = site{}
	debug.FreeOSMemory()
	if limit, why := memoryLimit(o.memoryLimit, a.getenv("GOMEMLIMIT"), liveHeap()); limit > 0 {
		debug.SetMemoryLimit(limit)
		log.Info("memory limit", "bytes", limit, "why", why)
		if o.memoryLimit == "auto" {
			stop := make(chan struct{})
			defer close(stop)
			go followLiveHeap(stop)
		}
	}
	if o.accountingOff {
		log.Warn("usage accounting is OFF (--accounting-off, a benchmark baseline): keyed requests are neither counted nor limited")
	}
	hs := &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    32 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("certbank ready", "addr", "http://"+ln.Addr().String(), "questions", questions,
		"certifications", certs, "store", storeName, "startup_ms", time.Since(start).Milliseconds())
	fmt.Fprintf(a.stdout, "certbank serving http://%s (%d questions, store %s)\n", ln.Addr(), questions, storeName)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}
