package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/certbank/certbank/paywall/store"
)

// insertUsageSQL creates the missing usage rows of $1, in key order, so that
// the lock below has a row to take for every key. A key another transaction
// is creating makes this wait for it, then skip.
const insertUsageSQL = `INSERT INTO usage_state (key_id)
	SELECT k FROM unnest($1::text[]) AS k ORDER BY k
	ON CONFLICT (key_id) DO NOTHING`

// lockUsageSQL reads and locks the usage rows of $1 in key order. A stable
// order keeps two batches that share keys from deadlocking. After waiting
// for a lock, PostgreSQL returns the row's latest version. $2 holds, for
// each key, the base revision this instance keeps (-1: none): a base of
// that revision is not sent again (NULL).
const lockUsageSQL = `SELECT s.key_id, s.minute_start, s.minute_count, s.seen, s.seen_count, s.base_rev,
		CASE WHEN s.base_rev = c.rev THEN NULL ELSE s.seen_base END
	FROM usage_state AS s
	JOIN unnest($1::text[], $2::bigint[]) AS c(key_id, rev) ON c.key_id = s.key_id
	ORDER BY s.key_id
	FOR UPDATE OF s`

// monthUsageSQL reads the counts of month $2 of the keys $1. It must be its
// own statement, run after lockUsageSQL: joined into the locking statement,
// these rows would come from the snapshot taken before waiting for the
// locks (READ COMMITTED re-reads only the locked rows), and a transaction
// that committed in between would have its counts lost.
const monthUsageSQL = `SELECT key_id, requests, questions
	FROM usage_monthly
	WHERE key_id = ANY($1::text[]) AND month = $2`

// saveStateSQL writes the state of keys $1. Where $6 is false the row keeps
// its seen_base: written back as the old value, a large one keeps its
// TOAST pointer and is not copied.
const saveStateSQL = `UPDATE usage_state AS s
	SET minute_start = u.minute_start, minute_count = u.minute_count, seen = u.seen, seen_count = u.seen_count,
		seen_base = CASE WHEN u.save_base THEN u.seen_base ELSE s.seen_base END,
		base_rev = CASE WHEN u.save_base THEN s.base_rev + 1 ELSE s.base_rev END
	FROM unnest($1::text[], $2::timestamptz[], $3::bigint[], $4::bytea[], $5::bigint[], $6::boolean[], $7::bytea[])
		AS u(key_id, minute_start, minute_count, seen, seen_count, save_base, seen_base)
	WHERE s.key_id = u.key_id`

const saveMonthSQL = `INSERT INTO usage_monthly (key_id, month, requests, questions)
	SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
	ON CONFLICT (key_id, month) DO UPDATE SET requests = excluded.requests, questions = excluded.questions`

// UpdateUsage runs fn in one READ COMMITTED transaction: when fn returns nil
// every Save is committed; when fn, a Load or Save against the database, or
// the commit fails, nothing is changed. (If the connection breaks during the
// commit, PostgreSQL may have committed: the error is Unavailable either
// way.) fn should call Load once: keys loaded by a second Load are locked
// after the first ones, out of the global key order, which may deadlock
// with another transaction (PostgreSQL then fails one of them).
func (db *DB) UpdateUsage(ctx context.Context, fn func(store.UsageTx) error) error {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return db.fail("begin usage transaction", err)
	}
	defer tx.Rollback(ctx) // after Commit, a no-op
	utx := &usageTx{db: db, tx: tx, loaded: make(map[string]bool)}
	if err := fn(utx); err != nil {
		return err
	}
	if utx.err != nil {
		return utx.err
	}
	if err := tx.Commit(ctx); err != nil {
		return db.fail("commit usage transaction", err)
	}
	return nil
}

// UsageConcurrency tells the service how many usage transactions it may
// run at once: they lock their keys' rows in key order, so concurrent
// transactions are safe (those sharing a key run one after the other), and
// while one waits for its commit another one can be prepared. Two keep the
// pool free for key lookups and the other queries.
func (db *DB) UsageConcurrency() int {
	return max(1, min(2, int(db.pool.Config().MaxConns)-1))
}

// usageTx is a store.UsageTx over a pgx transaction.
type usageTx struct {
	db     *DB
	tx     pgx.Tx
	loaded map[string]bool // key IDs loaded (and locked), the only ones Save accepts
	err    error           // the first database error, which dooms the transaction
}

// Load returns the usage of each key ID for month, locking it until the
// transaction ends: the minute and seen state is the latest, the month
// counts are month's, all zero for a key without usage. Its three
// statements go to the server in one round trip. It fails with Invalid
// unless month is "YYYY-MM".
func (u *usageTx) Load(ctx context.Context, keyIDs []string, month string) (map[string]*store.Usage, error) {
	if u.err != nil {
		return nil, u.err
	}
	if err := checkMonth(month); err != nil {
		return nil, err
	}
	out := make(map[string]*store.Usage, len(keyIDs))
	if len(keyIDs) == 0 {
		return out, nil
	}
	ids := slices.Compact(slices.Sorted(slices.Values(keyIDs)))
	kept, revs := u.db.bases.kept(ids)
	b := &pgx.Batch{}
	b.Queue(insertUsageSQL, ids)
	b.Queue(lockUsageSQL, ids, revs)
	b.Queue(monthUsageSQL, ids, month)
	br := u.tx.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, u.failed("load usage", err)
	}
	var (
		id                  string
		minute              pgtype.Timestamptz
		count, seenCount    int
		rev                 int64
		seen, base          []byte // pgx scans each row into new slices
		requests, questions int
	)
	rows, _ := br.Query() // errors come out of ForEachRow
	if _, err := pgx.ForEachRow(rows, []any{&id, &minute, &count, &seen, &seenCount, &rev, &base}, func() error {
		if k, ok := kept[id]; ok && base == nil && rev == k.rev {
			base = slices.Clip(k.base) // not sent: the kept one
		} else {
			u.db.bases.put(id, rev, base)
		}
		out[id] = &store.Usage{KeyID: id, MinuteStart: fromTimestamptz(minute), MinuteCount: count,
			Month: month, Seen: seen, SeenBase: base, SeenCount: seenCount}
		return nil
	}); err != nil {
		return nil, u.failed("load usage", err)
	}
	rows, _ = br.Query()
	if _, err := pgx.ForEachRow(rows, []any{&id, &requests, &questions}, func() error {
		if us := out[id]; us != nil {
			us.MonthRequests, us.MonthQuestions = requests, questions
		}
		return nil
	}); err != nil {
		return nil, u.failed("load usage", err)
	}
	if err := br.Close(); err != nil {
		return nil, u.failed("load usage", err)
	}
	for id := range out {
		u.loaded[id] = true
	}
	return out, nil
}

// Save writes usage states loaded in this transaction: the minute and seen
// state of each key, and its counts for u.Month; of two usages of one key,
// the later wins. Both statements go to the server in one round trip. It
// fails, writing nothing, when a usage was not loaded in this transaction
// or its month is not "YYYY-MM".
func (u *usageTx) Save(ctx context.Context, us []*store.Usage) error {
	if u.err != nil {
		return u.err
	}
	last := make(map[string]int, len(us))         // key ID → index of its last usage
	lastMonth := make(map[[2]string]int, len(us)) // (key ID, month) → index
	for i, x := range us {
		if x == nil {
			return errors.New("postgres: save usage: nil usage")
		}
		if !u.loaded[x.KeyID] {
			return fmt.Errorf("postgres: save usage: key %q was not loaded in this transaction", x.KeyID)
		}
		if err := checkMonth(x.Month); err != nil {
			return err
		}
		last[x.KeyID] = i
		lastMonth[[2]string{x.KeyID, x.Month}] = i
	}
	if len(us) == 0 {
		return nil
	}
	var (
		ids, monthIDs, months            []string
		minutes                          []pgtype.Timestamptz
		counts, seenCounts, reqs, quests []int64
		seen, bases                      [][]byte
		saveBase                         []bool
	)
	for i, x := range us {
		if last[x.KeyID] == i {
			ids = append(ids, x.KeyID)
			minutes = append(minutes, timestamptz(x.MinuteStart))
			counts = append(counts, int64(x.MinuteCount))
			seen = append(seen, x.Seen)
			seenCounts = append(seenCounts, int64(x.SeenCount))
			saveBase = append(saveBase, x.SaveBase)
			if x.SaveBase {
				bases = append(bases, x.SeenBase)
			} else {
				bases = append(bases, nil) // not sent: the row keeps its own
			}
		}
		if lastMonth[[2]string{x.KeyID, x.Month}] == i {
			monthIDs = append(monthIDs, x.KeyID)
			months = append(months, x.Month)
			reqs = append(reqs, int64(x.MonthRequests))
			quests = append(quests, int64(x.MonthQuestions))
		}
	}
	b := &pgx.Batch{}
	b.Queue(saveStateSQL, ids, minutes, counts, seen, seenCounts, saveBase, bases)
	b.Queue(saveMonthSQL, monthIDs, months, reqs, quests)
	br := u.tx.SendBatch(ctx, b)
	_, err := br.Exec()
	if err == nil {
		_, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return u.failed("save usage", err)
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
	err = db.pool.QueryRow(ctx, `SELECT requests, questions FROM usage_monthly WHERE key_id = $1 AND month = $2`,
		keyID, month).Scan(&requests, &questions)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, db.fail("monthly usage", err)
	}
	return requests, questions, nil
}

// baseCache keeps the seen bases an instance has read, by key and revision
// (see lockUsageSQL). A revision names one base for every instance, so an
// entry is never stale: at worst it is of an older revision, and the server
// then sends the current one.
type baseCache struct {
	mu    sync.Mutex
	m     map[string]keptBase
	bytes int
}

type keptBase struct {
	rev  int64
	base []byte
}

// baseCacheBytes bounds the kept bases.
const baseCacheBytes = 32 << 20

// kept returns the kept bases of ids and, in ids' order, their revisions
// (-1 for none). The caller uses these entries, whatever happens to the
// cache meanwhile.
func (c *baseCache) kept(ids []string) (map[string]keptBase, []int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string]keptBase, len(ids))
	revs := make([]int64, len(ids))
	for i, id := range ids {
		revs[i] = -1
		if k, ok := c.m[id]; ok {
			m[id], revs[i] = k, k.rev
		}
	}
	return m, revs
}

// put keeps base as key id's base of revision rev.
func (c *baseCache) put(id string, rev int64, base []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]keptBase)
	}
	if old, ok := c.m[id]; ok {
		c.bytes -= len(old.base) + len(id)
	}
	c.m[id] = keptBase{rev, slices.Clip(base)}
	c.bytes += len(base) + len(id)
	for other, k := range c.m { // beyond the bound, drop arbitrary entries
		if c.bytes <= baseCacheBytes {
			break
		}
		if other != id {
			c.bytes -= len(k.base) + len(other)
			delete(c.m, other)
		}
	}
}
