package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/certbank/certbank/paywall/store"
)

// Compaction of the usage log (see UpdateUsage). Every compactEvery the
// compactor writes the stored rows of the keys whose records have waited in
// the log for compactAge or more, at most compactKeys keys per
// transaction, and deletes the log rows that no longer hold anything
// unstored. A key used many times a second thus costs one row write a
// second instead of two upserts per request; compactKeys keeps each
// transaction short, since usage transactions wait for it.
const (
	compactEvery = 100 * time.Millisecond
	compactAge   = time.Second
	compactKeys  = 128
)

// trimLogSQL deletes the log rows up to an id, except the newest row: ids
// are never reused as long as the largest one stays (see schema 3).
const trimLogSQL = `DELETE FROM usage_log WHERE id <= ?1 AND id < (SELECT max(id) FROM usage_log)`

// compactOnce runs compactions until no more keys are due or Close begins;
// a failed compaction is retried on the next tick.
func (db *DB) compactOnce(ctx context.Context) {
	for {
		more, err := db.compact(ctx, compactKeys, compactAge)
		if err != nil || !more {
			return
		}
		select {
		case <-db.stop:
			return
		default:
		}
	}
}

// compact writes the stored rows of up to maxKeys keys that have been dirty
// for minAge or more, and trims the log. It reports whether more keys
// qualify. When the cache does not account for the whole log (foldAll),
// it folds the whole log from the file instead.
func (db *DB) compact(ctx context.Context, maxKeys int, minAge time.Duration) (more bool, err error) {
	c := &db.usage
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.dirty) == 0 && !(c.foldAll && c.lastLog > 0) {
		return false, nil // nothing of ours waits in the log
	}
	tx, err := db.beginUsage(ctx)
	if err != nil {
		return false, err
	}
	committed := false
	defer func() {
		if !committed {
			_ = tx.Rollback()
		}
	}()
	if c.foldAll {
		if err := db.foldLog(ctx, tx); err != nil {
			return false, err
		}
		committed = true
		if err := tx.Commit(); err != nil {
			c.reset(-1)
			return false, db.fail("commit usage compaction", err)
		}
		c.dirty, c.foldAll = nil, false
		return false, nil
	}

	now := time.Now()
	var due []string
	for id, d := range c.dirty {
		if now.Sub(d.since) >= minAge {
			due = append(due, id)
		}
	}
	if len(due) == 0 {
		return false, nil
	}
	slices.SortFunc(due, func(a, b string) int { return int(c.dirty[a].firstLog - c.dirty[b].firstLog) })
	more = len(due) > maxKeys
	due = due[:min(len(due), maxKeys)]
	for _, id := range due {
		u := c.m[id]
		if u == nil { // dirty keys are never evicted
			c.reset(-1)
			return false, fmt.Errorf("sqlite: usage compaction: key %q is dirty but not cached", id)
		}
		if err := db.writeRows(ctx, tx, u, c.lastLog, c.dirty[id]); err != nil {
			return false, err
		}
	}
	// Log rows before the oldest record still unstored hold nothing
	// unstored.
	written := make(map[string]bool, len(due))
	for _, id := range due {
		written[id] = true
	}
	keep := c.lastLog + 1
	for id, d := range c.dirty {
		if !written[id] {
			keep = min(keep, d.firstLog)
		}
	}
	if _, err := tx.StmtContext(ctx, db.trimLog).ExecContext(ctx, keep-1); err != nil {
		return false, db.fail("trim usage log", err)
	}
	committed = true
	if err := tx.Commit(); err != nil {
		c.reset(-1)
		return false, db.fail("commit usage compaction", err)
	}
	for _, id := range due {
		delete(c.dirty, id)
	}
	return more, nil
}

// writeRows writes u's stored rows, as including log row logID: its state,
// its month's counts and those of d's earlier months, and its base seen
// part if d says it changed.
func (db *DB) writeRows(ctx context.Context, tx *sql.Tx, u *store.Usage, logID int64, d *dirtyKey) error {
	if _, err := tx.StmtContext(ctx, db.saveState).ExecContext(ctx,
		u.KeyID, micros(u.MinuteStart), u.MinuteCount, u.Seen, u.SeenCount, logID); err != nil {
		return db.fail("save usage", err)
	}
	if d.base {
		base := u.SeenBase
		if base == nil {
			base = []byte{} // NOT NULL: the empty set
		}
		if _, err := tx.StmtContext(ctx, db.saveSeenBase).ExecContext(ctx, u.KeyID, base); err != nil {
			return db.fail("save usage", err)
		}
	}
	months := map[string][2]int{u.Month: {u.MonthRequests, u.MonthQuestions}}
	for m, n := range d.months {
		if m != u.Month {
			months[m] = n
		}
	}
	for _, m := range slices.Sorted(maps.Keys(months)) {
		if _, err := tx.StmtContext(ctx, db.saveMonth).ExecContext(ctx, u.KeyID, m, months[m][0], months[m][1]); err != nil {
			return db.fail("save usage", err)
		}
	}
	return nil
}

// foldLog writes the stored rows of every key with records in the log,
// from the file alone, and empties the log.
func (db *DB) foldLog(ctx context.Context, tx *sql.Tx) error {
	type rec struct {
		id int64
		r  logRecord
	}
	recs := map[string][]rec{}
	var keys []string
	var last int64
	rows, err := tx.StmtContext(ctx, db.logAfter).QueryContext(ctx, 0)
	if err != nil {
		return db.fail("fold usage log", err)
	}
	for rows.Next() {
		var id int64
		var entry []byte // a new slice per row: records may alias it
		if err := rows.Scan(&id, &entry); err != nil {
			rows.Close()
			return db.fail("fold usage log", err)
		}
		last = id
		if err := decodeEntry(entry, func(r logRecord) {
			if recs[r.keyID] == nil {
				keys = append(keys, r.keyID)
			}
			recs[r.keyID] = append(recs[r.keyID], rec{id, r})
		}); err != nil {
			rows.Close()
			return fmt.Errorf("sqlite: fold usage log: row %d: %w", id, err)
		}
	}
	if err := rows.Close(); err != nil {
		return db.fail("fold usage log", err)
	}
	if err := rows.Err(); err != nil {
		return db.fail("fold usage log", err)
	}
	if last == 0 {
		return nil
	}
	for chunk := range slices.Chunk(keys, 500) {
		stored, err := loadStored(stmtQuery(ctx, tx, db.loadUsage), chunk, "")
		if err != nil {
			return db.fail("fold usage log", err)
		}
		for _, id := range chunk {
			s := stored[id]
			d := &dirtyKey{months: map[string][2]int{}}
			applied := false
			for _, x := range recs[id] {
				if x.id <= s.logID {
					continue // already stored
				}
				applyRecord(&s.Usage, x.r)
				d.months[x.r.month] = [2]int{x.r.monthRequests, x.r.monthQuestions}
				d.base = d.base || x.r.hasBase
				applied = true
			}
			if !applied {
				continue
			}
			// The latest month becomes the usage's own; every month's last
			// counts are written.
			s.Month = slices.Max(slices.Collect(maps.Keys(d.months)))
			n := d.months[s.Month]
			s.MonthRequests, s.MonthQuestions = n[0], n[1]
			if err := db.writeRows(ctx, tx, &s.Usage, last, d); err != nil {
				return err
			}
		}
	}
	if _, err := tx.StmtContext(ctx, db.trimLog).ExecContext(ctx, last); err != nil {
		return db.fail("trim usage log", err)
	}
	return nil
}
