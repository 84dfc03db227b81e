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
	get("/api/v1/questions", "questions", s.handleQuestions)
	get("/functions/v1/api-v1-questions", "questions", s.handleQuestions)
	get("/api/v1/certifications", "certifications", s.handleCertifications)
	get("/functions/v1/api-v1-certifications", "certifications", s.handleCertifications)
	get("/api/v1/usage", "usage", s.handleUsage)
	get("/functions/v1/api-v1-usage", "usage", s.handleUsage)
	get("/api/v1/export", "export", s.handleExport)
	get("/api/v1/x402", "x402", s.handleX402)
	r.Handle("/api/v1/signup", s.cors(s.wrap("signup", s.handleSignup))).Methods(http.MethodPost, http.MethodOptions)
	r.Handle("/api/mcp/server-card", s.cors(s.wrap("mcp-card", s.handleServerCard))).Methods(http.MethodGet, http.MethodHead, http.MethodOptions)
	r.Handle("/api/mcp", s.wrap("mcp", s.handleMCP))
	r.Handle("/healthz", s.wrap("healthz", func(w http.ResponseWriter, r *http.Request) error {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		return nil
	})).Methods(http.MethodGet, http.MethodHead)
	r.Handle("/readyz", s.wrap("readyz", s.handleReady)).Methods(http.MethodGet, http.MethodHead)
	r.Handle("/metrics", s.wrap("metrics", func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		s.metrics.write(w)
		return nil
	})).Methods(http.MethodGet)
	// Unknown API paths get JSON; everything else is the static site.
	r.PathPrefix("/api/v1/").Handler(s.wrap("api-not-found", func(w http.ResponseWriter, r *http.Request) error {
		return certbank.Errorf(certbank.NotFound, "no endpoint %s %s; see /openapi.json", r.Method, r.URL.Path)
	}))
	r.PathPrefix("/functions/v1/").Handler(s.wrap("api-not-found", func(w http.ResponseWriter, r *http.Request) error {
		return certbank.Errorf(certbank.NotFound, "no endpoint %s %s; see /openapi.json", r.Method, r.URL.Path)
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

// cors lets browser clients (the study hubs with a learner's key, x402
// browser wallets) call the API, and answers preflights before any auth.
func (s *Server) cors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		if r.Header.Get("Origin") != "" {
			hd.Set("Access-Control-Allow-Origin", "*")
			hd.Set("Access-Control-Expose-Headers", "PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, X-Request-Id")
			hd.Add("Vary", "Origin")
		}
		if r.Method == http.MethodOptions {
			hd.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
			hd.Set("Access-Control-Allow-Headers", "Content-Type, x-api-key, X-PAYMENT, PAYMENT-SIGNATURE, Access-Control-Expose-Headers, X-Request-Id")
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
		return certbank.Errorf(certbank.Unavailable, "the store does not answer: %s", strings.SplitN(err.Error(), ":", 2)[0])
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "questions": len(s.ix.All())})
	return nil
}

func (s *Server) handleServerCard(w http.ResponseWriter, r *http.Request) error {
	card, ok := s.static.files[".well-known/mcp/server-card.json"]
	if !ok {
		return certbank.Errorf(certbank.NotFound, "no server card in this build")
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Header().Set("ETag", card.etag)
	if r.Header.Get("If-None-Match") == card.etag {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	w.Write(card.data)
	return nil
}
