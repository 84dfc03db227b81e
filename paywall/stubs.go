package paywall

import (
	"net/http"

	"github.com/certbank/certbank"
)

// PayConfig configures the pay-per-request route.
type PayConfig struct{}

type payRoute struct{}

func newPayRoute(s *Server, c PayConfig) (*payRoute, error) { return &payRoute{}, nil }

func (s *Server) handleX402(w http.ResponseWriter, r *http.Request) error {
	return certbank.Errorf(certbank.Unavailable, "pay-per-request is not configured")
}

func (s *Server) newMCPHandler() http.Handler { return nil }

func (s *Server) handleMCP(w http.ResponseWriter, r *http.Request) error {
	return certbank.Errorf(certbank.Unavailable, "MCP is not configured")
}
