package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/certbank/certbank/paywall/store"
)

// loadUsageSQL reads the stored usage of a JSON array of key IDs (one row
// per ID, NULLs for a key without usage) with the month counts of one
// month, and the last usage_log row the stored state includes.
const loadUsageSQL = `SELECT k.value, s.minute_start, s.minute_count, s.seen, b.seen, s.seen_count, s.log_id, m.requests, m.questions
	FROM json_each(?1) AS k
	LEFT JOIN usage_state AS s ON s.key_id = k.value
	LEFT JOIN usage_seen AS b ON b.key_id = k.value
	LEFT JOIN usage_monthly AS m ON m.key_id = k.value AND m.month = ?2`

const saveStateSQL = `INSERT INTO usage_state (key_id, minute_start, minute_count, seen, seen_count, log_id)
	VALUES (?, ?, ?, ?, ?, ?)
	ON CONFLICT (key_id) DO UPDATE SET minute_start = excluded.minute_start,
		minute_count = excluded.minute_count, seen = excluded.seen, seen_count = excluded.seen_count,
		log_id = excluded.log_id`

const saveSeenBaseSQL = `INSERT INTO usage_seen (key_id, seen) VALUES (?, ?)
	ON CONFLICT (key_id) DO UPDATE SET seen = excluded.seen`

const saveMonthSQL = `INSERT INTO usage_monthly (key_id, month, requests, questions)
	VALUES (?, ?, ?, ?)
	ON CONFLICT (key_id, month) DO UPDATE SET requests = excluded.requests, questions = excluded.questions`

const appendLogSQL = `INSERT INTO usage_log (entry) VALUES (?)`

// logAfterSQL reads the usage log after a row id, in order.
const logAfterSQL = `SELECT id, entry FROM usage_log WHERE id > ? ORDER BY id`

// dataVersionSQL tells whether another connection has committed to the file
// since this connection last looked (see UpdateUsage).
const dataVersionSQL = `PRAGMA data_version`

// UpdateUsage runs fn in one transaction on the write connection: when fn
// returns nil every Save is committed (and survives a crash of the process);
// when fn, a Load or Save against the database, or the commit fails,
// nothing is changed. Usage transactions, like all writes, run one at a
// time, so fn must be quick and must not call writing methods of db.
//
// A transaction's saves are committed as one row appended to usage_log,
// holding each key's new state (see logRecord), instead of an upsert per
// key and table; a compaction in the background writes the keys' own rows
// later (see compact). Loads are served from a cache of the committed usage
// of recently used keys while no other connection has written the file:
// PRAGMA data_version, read after BEGIN IMMEDIATE (so no other writer can
// commit until this transaction ends), changes whenever another connection
// commits. Another certbank serve on the same file, or a certbank keys
// command, therefore only sends the next transaction back to the file.
func (db *DB) UpdateUsage(ctx context.Context, fn func(store.UsageTx) error) error {
	// Held until the cache has the commit's result, so that the next
	// transaction (which could begin as soon as Commit releases the
	// connection) never reads a cache older than the file.
	db.usage.mu.Lock()
	defer db.usage.mu.Unlock()
	tx, err := db.beginUsage(ctx)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			_ = tx.Rollback()
		}
	}()
	utx := &usageTx{db: db, tx: tx, prev: make(map[string][]byte)}
	if err := fn(utx); err != nil {
		return err
	}
	if utx.err != nil {
		return utx.err
	}
	var logID int64
	if len(utx.records) > 0 {
		res, err := tx.StmtContext(ctx, db.appendLog).ExecContext(ctx, appendEntry(nil, utx.records))
		if err == nil {
			logID, err = res.LastInsertId()
		}
		if err != nil {
			return db.fail("save usage", err)
		}
	}
	done = true
	if err := tx.Commit(); err != nil {
		db.usage.reset(-1) // whatever the file holds now, read it next time
		return db.fail("commit usage transaction", err)
	}
	if len(utx.saved) > 0 {
		now := time.Now()
		for i := range utx.saved {
			db.usage.logged(&utx.saved[i], logID, now)
		}
		db.usage.lastLog = logID
	}
	return nil
}

// beginUsage begins a write transaction with db.usage.mu held and makes the
// cache valid for it: when another connection has committed since the
// cache was filled, the cache is dropped.
func (db *DB) beginUsage(ctx context.Context) (*sql.Tx, error) {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, db.fail("begin usage transaction", err)
	}
	var version int64
	if err := tx.StmtContext(ctx, db.dataVersion).QueryRowContext(ctx).Scan(&version); err != nil {
		_ = tx.Rollback()
		return nil, db.fail("begin usage transaction", err)
	}
	if version != db.usage.version {
		db.usage.reset(version)
	}
	return tx, nil
}

// usageCache is the committed usage of recently used keys, each with the
// counts of one month, for the write connection (see UpdateUsage), and the
// bookkeeping of the usage log. Entries are never changed in place: Load
// hands out copies, a commit replaces them.
type usageCache struct {
	mu      sync.Mutex // held for a whole usage transaction or compaction
	version int64      // the PRAGMA data_version the entries are valid for
	m       map[string]*store.Usage
	bytes   int

	// dirty holds the keys with records in the log that their stored rows
	// do not include yet. They are never evicted: compaction writes their
	// rows from the cache.
	dirty   map[string]*dirtyKey
	lastLog int64 // the last log row this connection appended
	// foldAll is set while the log may hold rows that dirty does not
	// account for (written before the cache was filled, or by another
	// connection): the next compaction then folds the whole log from the
	// file instead of writing the dirty keys from the cache.
	foldAll bool
}

// dirtyKey is a key whose stored rows lag behind the log.
type dirtyKey struct {
	firstLog int64             // the first log row with a record of the key not yet stored
	since    time.Time         // when that row was appended
	base     bool              // the base seen part changed: write usage_seen
	months   map[string][2]int // final counts of months before the cached one
}

// usageCacheBytes bounds the memory of the cache's clean entries; seen sets
// dominate it.
const usageCacheBytes = 64 << 20

func (c *usageCache) reset(version int64) {
	c.version, c.m, c.bytes, c.dirty, c.foldAll = version, nil, 0, nil, true
}

func cacheSize(u *store.Usage) int { return len(u.Seen) + len(u.SeenBase) + len(u.KeyID) + 160 }

// put records x as the committed state of its key. An unchanged base
// (SaveBase false) is the one already cached.
func (c *usageCache) put(x *store.Usage) {
	if c.m == nil {
		c.m = make(map[string]*store.Usage)
	}
	old := c.m[x.KeyID]
	if old != nil {
		c.bytes -= cacheSize(old)
		if d := c.dirty[x.KeyID]; d != nil && old.Month != x.Month {
			// The log holds the earlier month's last counts: keep them
			// for compaction.
			if d.months == nil {
				d.months = make(map[string][2]int)
			}
			d.months[old.Month] = [2]int{old.MonthRequests, old.MonthQuestions}
		}
	}
	// The seen parts are kept, not copied: Save's callers hand them over
	// (see store.UsageTx).
	e := *x
	e.Seen = slices.Clip(x.Seen)
	if old != nil && !x.SaveBase {
		e.SeenBase = old.SeenBase
	} else {
		e.SeenBase = slices.Clip(x.SeenBase)
	}
	e.SaveBase = false
	c.m[x.KeyID] = &e
	c.bytes += cacheSize(&e)
	for id, old := range c.m { // beyond the bound, evict arbitrary clean entries
		if c.bytes <= usageCacheBytes {
			break
		}
		if c.dirty[id] == nil {
			c.bytes -= cacheSize(old)
			delete(c.m, id)
		}
	}
}

// logged records that x was committed in log row id.
func (c *usageCache) logged(x *store.Usage, id int64, now time.Time) {
	if c.dirty == nil {
		c.dirty = make(map[string]*dirtyKey)
	}
	d := c.dirty[x.KeyID]
	if d == nil {
		d = &dirtyKey{firstLog: id, since: now}
		c.dirty[x.KeyID] = d
	}
	d.base = d.base || x.SaveBase
	c.put(x)
}

// get returns a copy of key id's cached state, if the cache has it with
// month's counts. Its seen parts share the cache's bytes, clipped so that
// an append copies them; like every opaque seen set, they must not be
// changed in place.
func (c *usageCache) get(id, month string) (*store.Usage, bool) {
	e := c.m[id]
	if e == nil || e.Month != month {
		return nil, false
	}
	u := *e
	u.Seen = slices.Clip(e.Seen)
	u.SeenBase = slices.Clip(e.SeenBase)
	return &u, true
}

// usageTx is a store.UsageTx over an SQLite transaction. Holding the only
// write connection, it already excludes every other writer, so its loads
// need no row locks.
type usageTx struct {
	db      *DB
	tx      *sql.Tx
	prev    map[string][]byte // recent seen part of each loaded key, as loaded or last saved
	records []logRecord       // the log entry being built
	saved   []store.Usage     // states written, cached once committed
	err     error             // the first database error, which dooms the transaction
}

// Load returns the usage of each key ID for month: the minute and seen state
// is the latest, the month counts are month's, all zero for a key without
// usage. It fails with Invalid unless month is "YYYY-MM".
func (u *usageTx) Load(ctx context.Context, keyIDs []string, month string) (map[string]*store.Usage, error) {
	if u.err != nil {
		return nil, u.err
	}
	if err := checkMonth(month); err != nil {
		return nil, err
	}
	out := make(map[string]*store.Usage, len(keyIDs))
	cache := &u.db.usage
	var missing []string
	for _, id := range keyIDs {
		if _, dup := out[id]; dup {
			continue
		}
		us, ok := cache.get(id, month)
		out[id] = us
		if ok {
			u.prev[id] = us.Seen
		} else {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	stored, err := loadStored(stmtQuery(ctx, u.tx, u.db.loadUsage), missing, month)
	if err != nil {
		return nil, u.failed("load usage", err)
	}
	if err := replayLog(stmtQuery(ctx, u.tx, u.db.logAfter), stored); err != nil {
		return nil, u.failed("load usage", err)
	}
	for id, s := range stored {
		out[id] = &s.Usage
		u.prev[id] = s.Seen
		cache.put(&s.Usage) // the committed state, whatever this transaction does
	}
	return out, nil
}

// storedUsage is a key's usage as its rows store it, and the last log row
// they include.
type storedUsage struct {
	store.Usage
	logID int64
}

// query runs one query; see stmtQuery and txQuery.
type query func(args ...any) (*sql.Rows, error)

// stmtQuery runs a prepared statement in tx.
func stmtQuery(ctx context.Context, tx *sql.Tx, stmt *sql.Stmt) query {
	return func(args ...any) (*sql.Rows, error) { return tx.StmtContext(ctx, stmt).QueryContext(ctx, args...) }
}

// txQuery runs a query in tx.
func txQuery(ctx context.Context, tx *sql.Tx, text string) query {
	return func(args ...any) (*sql.Rows, error) { return tx.QueryContext(ctx, text, args...) }
}

// loadStored reads the stored rows of keys (loadUsageSQL), with month's
// counts.
func loadStored(q query, keys []string, month string) (map[string]*storedUsage, error) {
	ids, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	rows, err := q(string(ids), month)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]*storedUsage, len(keys))
	for rows.Next() {
		var (
			s                                   storedUsage
			minute, logID                       sql.NullInt64
			count, seenCount, requests, queries sql.NullInt64
		)
		if err := rows.Scan(&s.KeyID, &minute, &count, &s.Seen, &s.SeenBase, &seenCount, &logID, &requests, &queries); err != nil {
			return nil, err
		}
		s.MinuteStart = fromMicros(minute)
		s.MinuteCount = int(count.Int64)
		s.Month = month
		s.MonthRequests, s.MonthQuestions = int(requests.Int64), int(queries.Int64)
		s.SeenCount = int(seenCount.Int64)
		s.logID = logID.Int64
		out[s.KeyID] = &s
	}
	return out, rows.Err()
}

// replayLog brings stored usages up to date with their records in the log
// (those after each one's logID). It reads the log once, from the oldest
// row any of them lacks.
func replayLog(q query, stored map[string]*storedUsage) error {
	from := int64(-1)
	for _, s := range stored {
		if from < 0 || s.logID < from {
			from = s.logID
		}
	}
	if from < 0 {
		return nil
	}
	rows, err := q(from)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var entry []byte
		if err := rows.Scan(&id, &entry); err != nil {
			return err
		}
		err := decodeEntry(entry, func(r logRecord) {
			if s := stored[r.keyID]; s != nil && id > s.logID {
				applyRecord(&s.Usage, r)
			}
		})
		if err != nil {
			return fmt.Errorf("usage log row %d: %w", id, err)
		}
	}
	return rows.Err()
}

// Save records usage states loaded in this transaction: the minute and seen
// state of each key, and its counts for u.Month. It fails, writing nothing,
// when a usage was not loaded in this transaction or its month is not
// "YYYY-MM".
func (u *usageTx) Save(ctx context.Context, us []*store.Usage) error {
	if u.err != nil {
		return u.err
	}
	for _, x := range us {
		if x == nil {
			return errors.New("sqlite: save usage: nil usage")
		}
		if _, ok := u.prev[x.KeyID]; !ok {
			return fmt.Errorf("sqlite: save usage: key %q was not loaded in this transaction", x.KeyID)
		}
		if err := checkMonth(x.Month); err != nil {
			return err
		}
	}
	for _, x := range us {
		u.records = append(u.records, recordOf(x, u.prev[x.KeyID]))
		u.prev[x.KeyID] = x.Seen
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
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // one snapshot of rows and log
	if err != nil {
		return 0, 0, db.fail("monthly usage", err)
	}
	defer tx.Rollback()
	stored, err := loadStored(txQuery(ctx, tx, loadUsageSQL), []string{keyID}, month)
	if err == nil {
		err = replayLog(txQuery(ctx, tx, logAfterSQL), stored)
	}
	if err != nil {
		return 0, 0, db.fail("monthly usage", err)
	}
	s := stored[keyID]
	return s.MonthRequests, s.MonthQuestions, nil
}
