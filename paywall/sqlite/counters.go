package sqlite

import (
	"context"
	"time"
)

// hitSQL adds one to a counter and returns its new count.
const hitSQL = `INSERT INTO counters (name, window_start, hits) VALUES (?, ?, 1)
	ON CONFLICT (name, window_start) DO UPDATE SET hits = hits + 1
	RETURNING hits`

// counterRetention is how long counters are kept: Hit discards windows
// older than this before the window it is given, at most once per
// pruneEvery of window time.
const (
	counterRetention = 24 * time.Hour
	pruneEvery       = time.Hour
)

// Hit adds one to the counter called name in the window that starts at
// window and returns the new count. Windows more than a day older than the
// newest one hit are discarded now and then.
func (db *DB) Hit(ctx context.Context, name string, window time.Time) (int, error) {
	w := window.UnixMicro()
	var n int
	if err := db.hitCounter.QueryRowContext(ctx, name, w).Scan(&n); err != nil {
		return 0, db.fail("hit counter", err)
	}
	if last := db.prunedAt.Load(); w-last >= pruneEvery.Microseconds() && db.prunedAt.CompareAndSwap(last, w) {
		// Best effort: a failed pruning is retried an hour later and
		// must not fail the hit that was counted.
		_, _ = db.write.ExecContext(ctx, `DELETE FROM counters WHERE window_start < ?`,
			w-counterRetention.Microseconds())
	}
	return n, nil
}
