package certbank

import (
	"errors"
	"fmt"
)

// Code is the kind of an error. Its string is the stable code that API
// clients see in error bodies.
type Code string

// The error kinds. Every layer returns one of these (wrapped with %w where it
// adds context); the HTTP layer maps them to statuses in one place.
const (
	Invalid              Code = "INVALID_PARAMS"         // bad input: 400
	Unauthorized         Code = "UNAUTHORIZED"           // missing, unknown or revoked key: 401
	PaymentRequired      Code = "PAYMENT_REQUIRED"       // no valid payment: 402
	TierRequired         Code = "TIER_REQUIRED"          // feature needs a higher tier: 403
	Forbidden            Code = "FORBIDDEN"              // not allowed from here (e.g. a foreign Origin): 403
	NotFound             Code = "NOT_FOUND"              // 404
	Conflict             Code = "CONFLICT"               // duplicate: 409
	InsufficientStock    Code = "INSUFFICIENT_QUESTIONS" // fewer questions than asked for: 409
	RateLimited          Code = "RATE_LIMITED"           // per-minute limit: 429
	MonthlyLimitExceeded Code = "MONTHLY_LIMIT_EXCEEDED" // per-month limit: 429
	Unavailable          Code = "UNAVAILABLE"            // a dependency is down: 503
	Internal             Code = "INTERNAL"               // anything else: 500
)

// Error is an error with a kind and a message that is safe to show a client.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error of kind code with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the kind of err: the code of the first *Error in its
// chain, or Internal for anything else (and "" for nil).
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// ErrorMessage returns the client-safe message of err: the message of the
// first *Error in its chain, or a generic text that leaks nothing internal.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error; please retry, and contact support if it persists"
}
