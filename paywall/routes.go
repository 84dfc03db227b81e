package paywall

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/certbank/certbank"
	"github.com/gorilla/mux"
)

// Handler returns the service's whole route table. This file is the only
// one that uses gorilla/mux.
func (s *Server) Handler() http.Handler {
	r := mux.NewRouter()
	r.StrictSlash(false)
	get := func(path, route string, h handlerFunc) {
		r.Handle(path, s.cors(s.wrap(route, h))).Methods(http.MethodGet, http.MethodHead, http.MethodOptions)
	}
	get(certbank.PathQuestions, "questions", s.handleQuestions)
	get(certbank.PathFnQuestions, "questions", s.handleQuestions)
	get(certbank.PathCertifications, "certifications", s.handleCertifications)
	get(certbank.PathFnCertifications, "certifications", s.handleCertifications)
	get(certbank.PathUsage, "usage", s.handleUsage)
	get(certbank.PathFnUsage, "usage", s.handleUsage)
	get(certbank.PathExport, "export", s.handleExport)
	get(certbank.PathX402, "x402", s.handleX402)
	r.Handle(certbank.PathSignup, s.cors(s.wrap("signup", s.handleSignup))).Methods(http.MethodPost, http.MethodOptions)
	get(certbank.PathExam, "exam", s.handleExam)
	post := func(path, route string, h handlerFunc) {
		r.Handle(path, s.cors(s.wrap(route, h))).Methods(http.MethodPost, http.MethodOptions)
	}
	post(certbank.PathExamAnswers, "exam-answers", s.handleExamAnswers)
	post(certbank.PathAnswers, "answers", s.handleAnswers)
	post(certbank.PathReports, "reports", s.handleReports)
	// The server card, on its MCP path and its well-known one alike.
	get(certbank.PathMCPServerCard, "mcp-card", s.handleServerCard)
	get(certbank.PathWellKnownMCPCard, "mcp-card", s.handleServerCard)
	r.Handle(certbank.PathMCP, s.wrap("mcp", s.handleMCP))
	r.Handle(certbank.PathHealth, s.wrap("healthz", func(w http.ResponseWriter, r *http.Request) error {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		return nil
	})).Methods(http.MethodGet, http.MethodHead)
	r.Handle(certbank.PathReady, s.wrap("readyz", s.handleReady)).Methods(http.MethodGet, http.MethodHead)
	r.Handle(certbank.PathMetrics, s.wrap("metrics", func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		s.metrics.write(w)
		return nil
	})).Methods(http.MethodGet)
	// Unknown API paths get JSON; everything else is the static site
	// (under /api/ too: the free sample feeds, with a JSON 404 for a
	// missing one).
	notFound := s.wrap("api-not-found", func(w http.ResponseWriter, r *http.Request) error {
		return certbank.Errorf(certbank.NotFound, "no endpoint %s %s; see /openapi.json", r.Method, r.URL.Path)
	})
	r.PathPrefix("/api/v1/").Handler(notFound)
	r.PathPrefix("/functions/v1/").Handler(notFound)
	r.PathPrefix("/api/").Handler(s.wrap("static", func(w http.ResponseWriter, r *http.Request) error {
		if !s.static.has(r) {
			return certbank.Errorf(certbank.NotFound, "no file or endpoint %s %s; the free sample feeds are /api/<slug>/questions-free.json (see /catalog.json) and the endpoints are in /openapi.json", r.Method, r.URL.Path)
		}
		s.static.ServeHTTP(w, r)
		return nil
	}))
	r.MethodNotAllowedHandler = s.wrap("method-not-allowed", func(w http.ResponseWriter, r *http.Request) error {
		return certbank.Errorf(certbank.Invalid, "method %s is not allowed on %s", r.Method, r.URL.Path)
	})
	r.PathPrefix("/").Handler(s.wrap("static", func(w http.ResponseWriter, r *http.Request) error {
		s.static.ServeHTTP(w, r)
		return nil
	}))
	return r
}

// Route is a path of the route table with its methods (none: any).
type Route struct {
	Path    string
	Methods []string
}

// Routes lists the route table's paths (not its prefixes: the not-found
// answers and the static site), in the order they are matched.
func (s *Server) Routes() []Route {
	var out []Route
	s.Handler().(*mux.Router).Walk(func(rt *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := rt.GetPathTemplate()
		if err != nil || strings.HasSuffix(tpl, "/") || tpl == "" {
			return nil // a PathPrefix
		}
		methods, _ := rt.GetMethods()
		out = append(out, Route{Path: tpl, Methods: methods})
		return nil
	})
	return out
}

// cors lets browser clients (the study hubs with a learner's key, x402
// browser wallets) call the API, and answers preflights before any auth.
func (s *Server) cors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		if r.Header.Get("Origin") != "" {
			hd.Set("Access-Control-Allow-Origin", "*")
			hd.Set("Access-Control-Expose-Headers", "PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, X-Request-Id, ETag")
			hd.Add("Vary", "Origin")
		}
		if r.Method == http.MethodOptions {
			hd.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
			hd.Set("Access-Control-Allow-Headers", "Content-Type, x-api-key, X-PAYMENT, PAYMENT-SIGNATURE, Access-Control-Expose-Headers, X-Request-Id, If-None-Match")
			hd.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		s.metrics.StoreError()
		// The cause goes to the log, never to the client (DESIGN.md §9).
		s.log.Error("readiness check: the store does not answer", "id", requestID(r.Context()), "err", err)
		return certbank.Errorf(certbank.Unavailable, "the store does not answer; retry shortly")
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "questions": len(s.ix.All())})
	return nil
}

// serverCardMaxAge is the server card's Cache-Control on both its paths:
// that of the other static discovery documents.
const serverCardMaxAge = "public, max-age=300"

// handleServerCard serves the MCP server card (built to
// .well-known/mcp/server-card.json) as application/mcp-server-card+json on
// its MCP path and its well-known path alike, with its ETag readable by
// browser clients.
func (s *Server) handleServerCard(w http.ResponseWriter, r *http.Request) error {
	card, ok := s.static.files[strings.TrimPrefix(certbank.PathWellKnownMCPCard, "/")]
	if !ok {
		return certbank.Errorf(certbank.NotFound, "no server card in this build")
	}
	h := w.Header()
	h.Set("Content-Type", certbank.MediaTypeMCPServerCard)
	h.Set("Cache-Control", serverCardMaxAge)
	h.Set("ETag", card.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	if r.Header.Get("If-None-Match") == card.etag {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	if r.Method == http.MethodHead {
		return nil
	}
	w.Write(card.data)
	return nil
}
