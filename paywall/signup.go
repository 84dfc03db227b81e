package paywall

// Signup: one free-tier key per email, shown once.

import (
	"encoding/json"
	"net/http"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/quota"
	"github.com/certbank/certbank/paywall/store"
)

type signupRequest struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// Signup limits.
const (
	maxSignupBody       = 4 << 10
	signupsPerHourPerIP = 5
)

// handleSignup serves POST /api/v1/signup.
func (s *Server) handleSignup(w http.ResponseWriter, r *http.Request) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return certbank.Errorf(certbank.Invalid, "send the body as JSON with Content-Type: application/json")
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSignupBody))
	dec.DisallowUnknownFields()
	var req signupRequest
	if err := dec.Decode(&req); err != nil {
		return certbank.Errorf(certbank.Invalid, "the body must be a JSON object {\"name\": \"…\", \"email\": \"…\"} of at most %d bytes: %v", maxSignupBody, err)
	}
	if dec.More() {
		return certbank.Errorf(certbank.Invalid, "the body must hold one JSON object")
	}
	name := strings.TrimSpace(req.Name)
	if name == "" || utf8.RuneCountInString(name) > 100 || strings.ContainsAny(name, "\x00\r\n") {
		return certbank.Errorf(certbank.Invalid, "name is required: 1 to 100 characters on one line")
	}
	email := strings.ToLower(strings.TrimSpace(req.Email))
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Address != email || len(email) > 254 || !strings.Contains(email[strings.LastIndex(email, "@")+1:], ".") {
		return certbank.Errorf(certbank.Invalid, "email %q is not a valid address like ada@example.com", req.Email)
	}
	now := s.now()
	n, err := s.store.Hit(r.Context(), "signup:"+s.clientAddr(r), now.UTC().Truncate(time.Hour))
	if err != nil {
		return err
	}
	if n > signupsPerHourPerIP {
		next := now.UTC().Truncate(time.Hour).Add(time.Hour)
		return quota.NewLimitError(certbank.Errorf(certbank.RateLimited, "too many signups from this address; try again after %s", next.Format(time.RFC3339)), next.Sub(now))
	}
	key, hash, prefix := NewAPIKey()
	free, _ := s.cfg.Bank.Site.Tier(certbank.TierFree)
	k := store.Key{ID: NewKeyID(), Hash: hash, Prefix: prefix, Name: name, Email: email, Tier: free.Name, CreatedAt: now.UTC()}
	if err := s.store.CreateKey(r.Context(), k); err != nil {
		if certbank.ErrorCode(err) == certbank.Conflict {
			return certbank.Errorf(certbank.Conflict, "%s already has an active API key; a lost key is replaced by support (%s)", email, s.cfg.Bank.Site.Contact)
		}
		return err
	}
	s.log.Info("signup", "id", requestID(r.Context()), "key_id", k.ID)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, map[string]any{
		"api_key": key,
		"key_id":  k.ID,
		"prefix":  prefix,
		"tier":    free.Name,
		"limits": map[string]any{
			"requests_per_minute": free.PerMinute,
			"requests_per_month":  nullableLimit(free.PerMonth),
			"unique_questions":    nullableLimit(free.UniqueQuestions),
			"max_limit":           free.MaxLimit,
		},
		"message": "Store this key now: it is shown only once and cannot be recovered. Send it in the x-api-key header.",
	})
	return nil
}

func nullableLimit(n int) *int {
	if n == certbank.Unlimited {
		return nil
	}
	return &n
}
