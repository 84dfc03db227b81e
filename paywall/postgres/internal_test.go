package postgres

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/certbank/certbank"
)

func TestErrorKind(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want certbank.Code
	}{
		{&pgconn.PgError{Code: "23505"}, certbank.Conflict},                 // unique_violation
		{&pgconn.PgError{Code: "23514"}, certbank.Invalid},                  // check_violation
		{&pgconn.PgError{Code: "22021"}, certbank.Invalid},                  // bad UTF-8 (a NUL in text)
		{&pgconn.PgError{Code: "57P01"}, certbank.Unavailable},              // admin_shutdown
		{&pgconn.PgError{Code: "57P03"}, certbank.Unavailable},              // cannot_connect_now (starting up)
		{&pgconn.PgError{Code: "53300"}, certbank.Unavailable},              // too_many_connections
		{&pgconn.PgError{Code: "08006"}, certbank.Unavailable},              // connection_failure
		{&pgconn.PgError{Code: "42P01"}, certbank.Internal},                 // undefined_table
		{&pgconn.PgError{Code: "40P01"}, certbank.Internal},                 // deadlock_detected
		{&pgconn.ConnectError{}, certbank.Unavailable},                      // dial failed
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), certbank.Unavailable}, // connection dropped
		{errors.New("something else"), certbank.Internal},
	} {
		if got := errorKind(tc.err); got != tc.want {
			t.Errorf("errorKind(%T %v) = %q, want %q", tc.err, tc.err, got, tc.want)
		}
	}
}
