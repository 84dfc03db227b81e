package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/certbank/certbank/paywall"
)

// loadUsageSQL reads the usage of a JSON array of key IDs (one row per ID,
// NULLs for a key without usage) with the month counts of one month.
const loadUsageSQL = `SELECT k.value, s.minute_start, s.minute_count, s.seen, b.seen, s.seen_count, m.requests, m.questions
	FROM json_each(?1) AS k
	LEFT JOIN usage_state AS s ON s.key_id = k.value
	LEFT JOIN usage_seen AS b ON b.key_id = k.value
	LEFT JOIN usage_monthly AS m ON m.key_id = k.value AND m.month = ?2`

const saveStateSQL = `INSERT INTO usage_state (key_id, minute_start, minute_count, seen, seen_count)
	VALUES (?, ?, ?, ?, ?)
	ON CONFLICT (key_id) DO UPDATE SET minute_start = excluded.minute_start,
		minute_count = excluded.minute_count, seen = excluded.seen, seen_count = excluded.seen_count`

const saveSeenBaseSQL = `INSERT INTO usage_seen (key_id, seen) VALUES (?, ?)
	ON CONFLICT (key_id) DO UPDATE SET seen = excluded.seen`

const saveMonthSQL = `INSERT INTO usage_monthly (key_id, month, requests, questions)
	VALUES (?, ?, ?, ?)
	ON CONFLICT (key_id, month) DO UPDATE SET requests = excluded.requests, questions = excluded.questions`

// dataVersionSQL tells whether another connection has committed to the file
// since this connection last looked (see UpdateUsage).
const dataVersionSQL = `PRAGMA data_version`

// UpdateUsage runs fn in one transaction on the write connection: when fn
// returns nil every Save is committed (and survives a crash of the process);
// when fn, a Load or Save against the database, or the commit fails,
// nothing is changed. Usage transactions, like all writes, run one at a
// time, so fn must be quick and must not call writing methods of db.
//
// Loads are served from a cache of the committed usage of recently used
// keys while no other connection has written the file: PRAGMA data_version,
// read after BEGIN IMMEDIATE (so no other writer can commit until this
// transaction ends), changes whenever another connection commits. Another
// certbank serve on the same file, or a certbank keys command, therefore
// only sends the next transaction back to the file.
func (db *DB) UpdateUsage(ctx context.Context, fn func(paywall.UsageTx) error) error {
	// Held until the cache has the commit's result, so that the next
	// transaction (which could begin as soon as Commit releases the
	// connection) never reads a cache older than the file.
	db.usage.mu.Lock()
	defer db.usage.mu.Unlock()
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return db.fail("begin usage transaction", err)
	}
	done := false
	defer func() {
		if !done {
			_ = tx.Rollback()
		}
	}()
	var version int64
	if err := tx.StmtContext(ctx, db.dataVersion).QueryRowContext(ctx).Scan(&version); err != nil {
		return db.fail("begin usage transaction", err)
	}
	if version != db.usage.version {
		db.usage.reset(version)
	}
	utx := &usageTx{db: db, tx: tx, loaded: make(map[string]bool)}
	if err := fn(utx); err != nil {
		return err
	}
	if utx.err != nil {
		return utx.err
	}
	done = true
	if err := tx.Commit(); err != nil {
		db.usage.reset(-1) // whatever the file holds now, read it next time
		return db.fail("commit usage transaction", err)
	}
	for i := range utx.saved {
		db.usage.put(&utx.saved[i])
	}
	return nil
}

// usageCache is the committed usage of recently used keys, each with the
// counts of one month, for the write connection (see UpdateUsage). Entries
// are never changed in place: Load hands out copies, a commit replaces
// them.
type usageCache struct {
	mu      sync.Mutex // held for a whole usage transaction
	version int64      // the PRAGMA data_version the entries are valid for
	m       map[string]*paywall.Usage
	bytes   int
}

// usageCacheBytes bounds the cache's memory; seen sets dominate it.
const usageCacheBytes = 64 << 20

func (c *usageCache) reset(version int64) {
	c.version, c.m, c.bytes = version, nil, 0
}

func cacheSize(u *paywall.Usage) int { return len(u.Seen) + len(u.SeenBase) + len(u.KeyID) + 160 }

// put records a copy of x as the committed state of its key. An unchanged
// base (SaveBase false) is the one already cached and is not copied again.
func (c *usageCache) put(x *paywall.Usage) {
	if c.m == nil {
		c.m = make(map[string]*paywall.Usage)
	}
	old := c.m[x.KeyID]
	if old != nil {
		c.bytes -= cacheSize(old)
	}
	e := *x
	e.Seen = bytes.Clone(x.Seen)
	if old != nil && !x.SaveBase {
		e.SeenBase = old.SeenBase
	} else {
		e.SeenBase = bytes.Clone(x.SeenBase)
	}
	e.SaveBase = false
	c.m[x.KeyID] = &e
	c.bytes += cacheSize(&e)
	for id, old := range c.m { // beyond the bound, evict arbitrary entries
		if c.bytes <= usageCacheBytes {
			break
		}
		c.bytes -= cacheSize(old)
		delete(c.m, id)
	}
}

// get returns a copy of key id's cached state, if the cache has it with
// month's counts. Its Seen shares the cache's bytes, clipped so that an
// append copies them; like every opaque seen set, it must not be changed
// in place.
func (c *usageCache) get(id, month string) (*paywall.Usage, bool) {
	e := c.m[id]
	if e == nil || e.Month != month {
		return nil, false
	}
	u := *e
	u.Seen = slices.Clip(e.Seen)
	u.SeenBase = slices.Clip(e.SeenBase)
	return &u, true
}

// usageTx is a paywall.UsageTx over an SQLite transaction. Holding the only
// write connection, it already excludes every other writer, so its loads
// need no row locks.
type usageTx struct {
	db     *DB
	tx     *sql.Tx
	loaded map[string]bool // key IDs loaded, the only ones Save accepts
	saved  []paywall.Usage // states written, cached once committed
	err    error           // the first database error, which dooms the transaction
}

// Load returns the usage of each key ID for month: the minute and seen state
// is the latest, the month counts are month's, all zero for a key without
// usage. It fails with Invalid unless month is "YYYY-MM".
func (u *usageTx) Load(ctx context.Context, keyIDs []string, month string) (map[string]*paywall.Usage, error) {
	if u.err != nil {
		return nil, u.err
	}
	if err := checkMonth(month); err != nil {
		return nil, err
	}
	out := make(map[string]*paywall.Usage, len(keyIDs))
	cache := &u.db.usage
	var missing []string
	for _, id := range keyIDs {
		if _, dup := out[id]; dup {
			continue
		}
		us, ok := cache.get(id, month)
		out[id] = us
		if ok {
			u.loaded[id] = true
		} else {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	ids, err := json.Marshal(missing)
	if err != nil {
		return nil, fmt.Errorf("sqlite: load usage: %w", err)
	}
	rows, err := u.tx.StmtContext(ctx, u.db.loadUsage).QueryContext(ctx, string(ids), month)
	if err != nil {
		return nil, u.failed("load usage", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			us                                  paywall.Usage
			minute                              sql.NullInt64
			count, seenCount, requests, queries sql.NullInt64
		)
		if err := rows.Scan(&us.KeyID, &minute, &count, &us.Seen, &us.SeenBase, &seenCount, &requests, &queries); err != nil {
			return nil, u.failed("load usage", err)
		}
		us.MinuteStart = fromMicros(minute)
		us.MinuteCount = int(count.Int64)
		us.Month = month
		us.MonthRequests, us.MonthQuestions = int(requests.Int64), int(queries.Int64)
		us.SeenCount = int(seenCount.Int64)
		out[us.KeyID] = &us
		u.loaded[us.KeyID] = true
		cache.put(&us) // the committed state, whatever this transaction does
	}
	if err := rows.Err(); err != nil {
		return nil, u.failed("load usage", err)
	}
	return out, nil
}

// Save writes usage states loaded in this transaction: the minute and seen
// state of each key, and its counts for u.Month. It fails, writing nothing,
// when a usage was not loaded in this transaction or its month is not
// "YYYY-MM".
func (u *usageTx) Save(ctx context.Context, us []*paywall.Usage) error {
	if u.err != nil {
		return u.err
	}
	for _, x := range us {
		if x == nil {
			return errors.New("sqlite: save usage: nil usage")
		}
		if !u.loaded[x.KeyID] {
			return fmt.Errorf("sqlite: save usage: key %q was not loaded in this transaction", x.KeyID)
		}
		if err := checkMonth(x.Month); err != nil {
			return err
		}
	}
	state := u.tx.StmtContext(ctx, u.db.saveState)
	monthly := u.tx.StmtContext(ctx, u.db.saveMonth)
	for _, x := range us {
		if _, err := state.ExecContext(ctx, x.KeyID, micros(x.MinuteStart), x.MinuteCount, x.Seen, x.SeenCount); err != nil {
			return u.failed("save usage", err)
		}
		if x.SaveBase {
			base := x.SeenBase
			if base == nil {
				base = []byte{} // NOT NULL: the empty set
			}
			if _, err := u.tx.StmtContext(ctx, u.db.saveSeenBase).ExecContext(ctx, x.KeyID, base); err != nil {
				return u.failed("save usage", err)
			}
		}
		if _, err := monthly.ExecContext(ctx, x.KeyID, x.Month, x.MonthRequests, x.MonthQuestions); err != nil {
			return u.failed("save usage", err)
		}
		u.saved = append(u.saved, *x)
	}
	return nil
}

// failed records a database error, after which the transaction can only
// roll back, and returns it.
func (u *usageTx) failed(op string, err error) error {
	u.err = u.db.fail(op, err)
	return u.err
}

// MonthlyUsage returns a key's request and question counts for a month,
// zero when it has none. It fails with Invalid unless month is "YYYY-MM".
func (db *DB) MonthlyUsage(ctx context.Context, keyID, month string) (requests, questions int, err error) {
	if err := checkMonth(month); err != nil {
		return 0, 0, err
	}
	err = db.read.QueryRowContext(ctx, `SELECT requests, questions FROM usage_monthly WHERE key_id = ? AND month = ?`,
		keyID, month).Scan(&requests, &questions)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, db.fail("monthly usage", err)
	}
	return requests, questions, nil
}
