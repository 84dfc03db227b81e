package postgres

import (
	"context"
	"time"
)

// counterRetention is how long counters are kept: Hit discards windows
// older than this before the window it is given, at most once per
// pruneEvery of window time (per instance).
const (
	counterRetention = 24 * time.Hour
	pruneEvery       = time.Hour
)

// Hit adds one to the counter called name in the window that starts at
// window and returns the new count. Windows more than a day older than the
// newest one hit are discarded now and then.
func (db *DB) Hit(ctx context.Context, name string, window time.Time) (int, error) {
	var n int
	err := db.pool.QueryRow(ctx, `INSERT INTO counters (name, window_start, hits) VALUES ($1, $2, 1)
		ON CONFLICT (name, window_start) DO UPDATE SET hits = counters.hits + 1
		RETURNING hits`, name, timestamptz(window)).Scan(&n)
	if err != nil {
		return 0, db.fail("hit counter", err)
	}
	w := window.UnixMicro()
	if last := db.prunedAt.Load(); w-last >= pruneEvery.Microseconds() && db.prunedAt.CompareAndSwap(last, w) {
		// Best effort: a failed pruning is retried an hour later and
		// must not fail the hit that was counted.
		_, _ = db.pool.Exec(ctx, `DELETE FROM counters WHERE window_start < $1`,
			timestamptz(window.Add(-counterRetention)))
	}
	return n, nil
}
