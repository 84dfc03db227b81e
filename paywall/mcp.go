package paywall

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/draw"
	"github.com/certbank/certbank/paywall/learn"
)

// The MCP door: Origin protection, CORS, key authentication and the body
// limit, then paywall/mcpserver (the official SDK) answers.

const mcpMaxBody = 1 << 20

// allowedOrigin reports whether a browser page at origin may call /api/mcp:
// the site's own origins, the request's own host, and configured ones.
func (s *Server) allowedOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if u.Host == r.Host {
		return true
	}
	site := s.cfg.Bank.Site
	for _, base := range []string{site.BaseURL, site.MCPURL, site.FunctionsURL} {
		if b, err := url.Parse(base); err == nil && strings.EqualFold(b.Scheme+"://"+b.Host, u.Scheme+"://"+u.Host) {
			return true
		}
	}
	for _, o := range s.cfg.AllowedOrigins {
		if o == "*" || strings.EqualFold(strings.TrimRight(o, "/"), origin) {
			return true
		}
	}
	return false
}

// handleMCP serves /api/mcp.
func (s *Server) handleMCP(w http.ResponseWriter, r *http.Request) error {
	origin := r.Header.Get("Origin")
	if origin != "" {
		if !s.allowedOrigin(origin, r) {
			return certbank.Errorf(certbank.Forbidden, "origin %s may not call this MCP endpoint; browser clients must be served from the site's own origin or an allowed one", origin)
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, MCP-Protocol-Version")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "POST, GET, DELETE, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Content-Type, Accept, Authorization, x-api-key, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
	}
	if raw := strings.TrimSpace(r.Header.Get("x-api-key")); raw != "" {
		if !validKeyShape(raw) {
			return errUnauthorized
		}
		k, err := s.lookupKey(r.Context(), raw)
		if err != nil {
			return err
		}
		r = r.WithContext(draw.WithKey(r.Context(), k))
	}
	r = r.WithContext(learn.WithClient(r.Context(), s.clientAddr(r)))
	r.Body = http.MaxBytesReader(w, r.Body, mcpMaxBody)
	s.mcp.ServeHTTP(w, r)
	return nil
}
