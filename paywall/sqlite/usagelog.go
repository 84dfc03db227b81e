package sqlite

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/certbank/certbank/paywall/store"
)

// logRecord is one key's new usage state in a usage_log entry: the counts
// in full, and the seen set as a change: the bytes appended to the recent
// part or, when it did not just grow, the whole part, and the base part
// when it changed.
type logRecord struct {
	keyID          string
	minuteStart    time.Time
	minuteCount    int
	month          string
	monthRequests  int
	monthQuestions int
	seenCount      int
	recentFull     bool   // recent replaces the recent part; else it is appended
	recent         []byte // aliases the entry it was decoded from
	base           []byte // the new base part, if hasBase
	hasBase        bool
}

const logVersion = 1

const (
	flagMinute     = 1 << iota // minuteStart is set
	flagRecentFull             // recent is the whole part
	flagBase                   // base follows
)

// recordOf is the record of saving x over prev, the key's seen recent part
// as loaded (or as last saved in the same transaction).
func recordOf(x *store.Usage, prev []byte) logRecord {
	r := logRecord{keyID: x.KeyID, minuteStart: x.MinuteStart, minuteCount: x.MinuteCount,
		month: x.Month, monthRequests: x.MonthRequests, monthQuestions: x.MonthQuestions,
		seenCount: x.SeenCount, base: x.SeenBase, hasBase: x.SaveBase}
	if !x.SaveBase && bytes.HasPrefix(x.Seen, prev) {
		r.recent = x.Seen[len(prev):]
	} else {
		r.recent, r.recentFull = x.Seen, true
	}
	return r
}

// appendEntry encodes records as one usage_log entry.
func appendEntry(b []byte, rs []logRecord) []byte {
	b = append(b, logVersion)
	for _, r := range rs {
		b = binary.AppendUvarint(b, uint64(len(r.keyID)))
		b = append(b, r.keyID...)
		var flags byte
		if !r.minuteStart.IsZero() {
			flags |= flagMinute
		}
		if r.recentFull {
			flags |= flagRecentFull
		}
		if r.hasBase {
			flags |= flagBase
		}
		b = append(b, flags)
		if !r.minuteStart.IsZero() {
			b = binary.AppendVarint(b, r.minuteStart.UnixMicro())
		}
		b = append(b, r.month...) // checked: always 7 bytes
		for _, n := range []int{r.minuteCount, r.monthRequests, r.monthQuestions, r.seenCount, len(r.recent)} {
			b = binary.AppendUvarint(b, uint64(n))
		}
		b = append(b, r.recent...)
		if r.hasBase {
			b = binary.AppendUvarint(b, uint64(len(r.base)))
			b = append(b, r.base...)
		}
	}
	return b
}

var errBadEntry = errors.New("malformed usage log entry")

// decodeEntry calls fn with each record of entry. The records' byte
// slices alias entry.
func decodeEntry(entry []byte, fn func(logRecord)) error {
	if len(entry) == 0 || entry[0] != logVersion {
		return fmt.Errorf("%w: version %v", errBadEntry, entry[:min(1, len(entry))])
	}
	b := entry[1:]
	uvarint := func() (int, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > math.MaxInt64 {
			return 0, false
		}
		b = b[k:]
		return int(n), true
	}
	take := func(n int) ([]byte, bool) {
		if n < 0 || n > len(b) {
			return nil, false
		}
		out := b[:n:n]
		b = b[n:]
		return out, true
	}
	for len(b) > 0 {
		var r logRecord
		n, ok := uvarint()
		id, ok2 := take(n)
		if !ok || !ok2 || len(b) < 1 {
			return errBadEntry
		}
		r.keyID = string(id)
		flags := b[0]
		b = b[1:]
		if flags&flagMinute != 0 {
			us, k := binary.Varint(b)
			if k <= 0 {
				return errBadEntry
			}
			b = b[k:]
			r.minuteStart = time.UnixMicro(us).UTC()
		}
		month, ok := take(7)
		if !ok {
			return errBadEntry
		}
		r.month = string(month)
		var nums [5]int
		for i := range nums {
			if nums[i], ok = uvarint(); !ok {
				return errBadEntry
			}
		}
		r.minuteCount, r.monthRequests, r.monthQuestions, r.seenCount = nums[0], nums[1], nums[2], nums[3]
		if r.recent, ok = take(nums[4]); !ok {
			return errBadEntry
		}
		r.recentFull = flags&flagRecentFull != 0
		if flags&flagBase != 0 {
			n, ok := uvarint()
			base, ok2 := take(n)
			if !ok || !ok2 {
				return errBadEntry
			}
			r.base, r.hasBase = base, true
		}
		fn(r)
	}
	return nil
}

// applyRecord brings u, a key's usage with the month counts of u.Month, up
// to r. The seen parts are never changed in place.
func applyRecord(u *store.Usage, r logRecord) {
	u.MinuteStart, u.MinuteCount, u.SeenCount = r.minuteStart, r.minuteCount, r.seenCount
	if r.recentFull {
		u.Seen = bytes.Clone(r.recent)
	} else if len(r.recent) > 0 {
		u.Seen = append(bytes.Clone(u.Seen), r.recent...)
	}
	if r.hasBase {
		u.SeenBase = bytes.Clone(r.base)
	}
	if r.month == u.Month {
		u.MonthRequests, u.MonthQuestions = r.monthRequests, r.monthQuestions
	}
}
