package postgres

import (
	"context"
	"fmt"
	"regexp"

	"github.com/jackc/pgx/v5"
)

var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// CreateSchema creates an empty schema on the server of dsn. Operators can
// isolate several certbank sites on one database this way (put
// search_path=NAME in the DSN); tests use it for a fresh database each.
func CreateSchema(ctx context.Context, dsn, name string) error {
	return execSchema(ctx, dsn, name, "CREATE SCHEMA %s")
}

// DropSchema drops a schema with everything in it.
func DropSchema(ctx context.Context, dsn, name string) error {
	return execSchema(ctx, dsn, name, "DROP SCHEMA IF EXISTS %s CASCADE")
}

func execSchema(ctx context.Context, dsn, name, stmt string) error {
	if !schemaName.MatchString(name) {
		return fmt.Errorf("schema name %q must be lowercase letters, digits and underscores", name)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return (&DB{}).fail("schema", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, fmt.Sprintf(stmt, name)); err != nil {
		return (&DB{}).fail("schema", err)
	}
	return nil
}
