#!/bin/sh
# make bench-service: the service benchmark of BENCHMARKS.md "## Service".
# Builds bin/certbank, then runs loadtest/ once: accounting off, SQLite and
# PostgreSQL back to back on the 13,000-question synthetic bank, 50
# connections, 1,000 Enterprise keys. PostgreSQL is the server of
# CERTBANK_TEST_POSTGRES, or 127.0.0.1:5432 (a scratch schema is created and
# dropped). Extra arguments go to loadtest, e.g. -d 20s -rounds 3.
set -eu
cd "$(dirname "$0")/.."
GO=${GO:-go}
$GO build -o bin/certbank ./cmd/certbank
$GO build -o bin/loadtest ./loadtest
if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null && [ -z "${CERTBANK_TEST_POSTGRES:-}" ]; then
  echo "PostgreSQL is not reachable on 127.0.0.1:5432: benchmarking accounting off and SQLite only"
  exec ./bin/loadtest -bin bin/certbank -configs off,sqlite "$@"
fi
exec ./bin/loadtest -bin bin/certbank "$@"
