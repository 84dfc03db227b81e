package paywall

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/bank"
	"github.com/certbank/certbank/paywall/draw"
	"github.com/certbank/certbank/paywall/learn"
	"github.com/certbank/certbank/paywall/mcpserver"
	"github.com/certbank/certbank/paywall/quota"
	"github.com/certbank/certbank/paywall/store"
)

// Config is what the service needs. cmd/certbank builds it from flags.
type Config struct {
	Bank   *certbank.Bank
	Static map[string][]byte // the public site: path under public/ → bytes
	Store  store.Store
	Pay    *PayConfig // nil: the pay-per-request route answers 503
	Logger *slog.Logger
	Now    func() time.Time
	// TrustProxy takes the client address from X-Forwarded-For (set it only
	// behind a proxy that overwrites that header).
	TrustProxy bool
	// AllowedOrigins may call /api/mcp from a browser besides the site's own
	// origins; "*" allows any.
	AllowedOrigins []string
	// KeyCacheTTL is how long a looked-up API key is cached per instance
	// (revocations take effect within it). 0 means one second.
	KeyCacheTTL time.Duration
	// Accountant records keyed requests' usage under their tiers' limits;
	// nil is a quota.Accountant over Store (quota.Noop is the benchmark
	// baseline's).
	Accountant draw.Accountant
}

// Server is the certbank service.
type Server struct {
	cfg     Config
	ix      *bank.Index
	store   store.Store
	log     *slog.Logger
	now     func() time.Time
	metrics *metrics
	acct    *quota.Accountant // the accountant New started, if it did
	draw    *draw.Service
	learn   *learn.Service
	static  *staticSite
	keys    keyCache
	pay     *payRoute
	mcp     http.Handler
}

// New checks the configuration and starts the service's background work;
// Close stops it.
func New(cfg Config) (*Server, error) {
	if cfg.Bank == nil || cfg.Store == nil {
		return nil, errors.New("paywall: Config needs Bank and Store")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.KeyCacheTTL == 0 {
		cfg.KeyCacheTTL = time.Second
	}
	ix := bank.New(cfg.Bank)
	cfg.Bank = ix.Bank() // without the questions' text, which ix holds encoded
	s := &Server{cfg: cfg, ix: ix, store: cfg.Store, log: cfg.Logger, now: cfg.Now, metrics: newMetrics()}
	s.static = newStaticSite(cfg.Static)
	acct := cfg.Accountant
	if acct == nil {
		s.acct = quota.New(cfg.Store, s.metrics)
		acct = s.acct
	}
	s.draw = draw.New(ix, acct, cfg.Now)
	s.learn = learn.New(s.draw, cfg.Store, cfg.Now, cfg.Logger)
	s.keys = keyCache{ttl: cfg.KeyCacheTTL, m: map[string]cachedKey{}}
	if cfg.Pay != nil {
		p, err := newPayRoute(s, *cfg.Pay)
		if err != nil {
			s.closeAccountant()
			return nil, err
		}
		s.pay = p
	}
	s.mcp = mcpserver.New(mcpserver.Config{Draw: s.draw, Learn: s.learn, Logger: s.log, MaxBody: mcpMaxBody, TrustProxy: cfg.TrustProxy,
		Rejected: func(kind certbank.Code) { s.metrics.reject(string(kind)) }})
	return s, nil
}

// Close stops background work. In-flight requests should be drained first
// (http.Server.Shutdown).
func (s *Server) Close() error {
	if s.pay != nil {
		s.pay.close()
	}
	s.closeAccountant()
	return nil
}

func (s *Server) closeAccountant() {
	if s.acct != nil {
		s.acct.Close()
	}
}

// handlerFunc is an endpoint: it writes a response or returns an error for
// writeError to render.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// statusOf maps an error kind to its HTTP status.
func statusOf(code certbank.Code) int {
	switch code {
	case certbank.Invalid:
		return http.StatusBadRequest
	case certbank.Unauthorized:
		return http.StatusUnauthorized
	case certbank.PaymentRequired:
		return http.StatusPaymentRequired
	case certbank.TierRequired, certbank.Forbidden:
		return http.StatusForbidden
	case certbank.NotFound:
		return http.StatusNotFound
	case certbank.Conflict, certbank.InsufficientStock:
		return http.StatusConflict
	case certbank.RateLimited, certbank.MonthlyLimitExceeded:
		return http.StatusTooManyRequests
	case certbank.Unavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

type errorBody struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// writeError renders err as {error, code} with the status of its kind. It
// is the one place errors become responses: internal errors are logged
// with the request id and shown to the client only as a generic message.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := certbank.ErrorCode(err)
	status := statusOf(code)
	var pr *paymentRefused
	if errors.As(err, &pr) && code == certbank.PaymentRequired {
		s.writePaymentRequired(w, r, pr)
		return
	}
	var le *quota.LimitError
	if errors.As(err, &le) {
		w.Header().Set("Retry-After", strconv.Itoa(int(le.RetryAfter.Seconds()+0.999)))
		s.metrics.reject(string(code))
	}
	if code == certbank.Unavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "5")
	}
	if status >= 500 {
		s.log.Error("request failed", "id", requestID(r.Context()), "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	}
	writeJSON(w, status, errorBody{Error: certbank.ErrorMessage(err), Code: string(code)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

type ctxKey int

const requestIDKey ctxKey = 1

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

func newRequestID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// wrap turns an endpoint into an http.Handler with a request id, metrics,
// logging, panic recovery and the one error renderer.
func (s *Server) wrap(route string, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > 64 {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey, id))
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("panic", "id", id, "path", r.URL.Path, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if rec.status == 0 {
					s.writeError(rec, r, fmt.Errorf("panic: %v", p))
				}
			}
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			d := time.Since(start)
			s.metrics.observe(route, status, d)
			s.log.Debug("request", "id", id, "method", r.Method, "path", r.URL.Path, "status", status, "duration_ms", float64(d.Microseconds())/1000)
		}()
		if err := h(rec, r); err != nil {
			s.writeError(rec, r, err)
		}
	})
}

// clientAddr is the requesting client's IP address.
func (s *Server) clientAddr(r *http.Request) string {
	if s.cfg.TrustProxy {
		if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
			return strings.TrimSpace(strings.Split(xff, ",")[0])
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// keyCache caches key lookups by hash for a short time.
type keyCache struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]cachedKey
}

type cachedKey struct {
	key store.Key
	at  time.Time
}

func (c *keyCache) get(hash string, now time.Time) (store.Key, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[hash]
	if !ok || now.Sub(e.at) > c.ttl {
		return store.Key{}, false
	}
	return e.key, true
}

func (c *keyCache) put(hash string, k store.Key, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) > 100000 {
		c.m = map[string]cachedKey{}
	}
	c.m[hash] = cachedKey{k, now}
}
