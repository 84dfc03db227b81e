package storetest

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/certbank/certbank/paywall/store"
)

// BenchUpdateUsageBatch measures the service's group commit on s: each
// operation is one UpdateUsage for a batch of 64 requests spread at random
// over 1,000 keys (so about 62 distinct keys, loaded in one Load), where
// each request counts itself and adds 10 seen entries of 8 bytes to its
// key's blob. Blobs are seeded with 100 entries and capped at 200 (1.6 KB,
// the size of a bitmap over a 13,000-question bank) so every operation
// writes about the same amount. It reports ns/request besides ns/op.
func BenchUpdateUsageBatch(b *testing.B, s store.Store) {
	const (
		keys       = 1000
		batch      = 64
		perRequest = 10
		entryBytes = 8
		seedSeen   = 100 * entryBytes
		maxSeen    = 200 * entryBytes
		month      = "2026-03"
	)
	ctx := b.Context()
	ids := make([]string, keys)
	for i := range ids {
		ids[i] = fmt.Sprintf("key_%016x", i)
	}
	r := rand.New(rand.NewPCG(1, 2))
	err := s.UpdateUsage(ctx, func(tx store.UsageTx) error {
		us, err := tx.Load(ctx, ids, month)
		if err != nil {
			return err
		}
		save := make([]*store.Usage, 0, len(us))
		for _, u := range us {
			u.Seen = make([]byte, seedSeen)
			for i := 0; i < len(u.Seen); i += entryBytes {
				binary.LittleEndian.PutUint64(u.Seen[i:], r.Uint64())
			}
			u.SeenCount = seedSeen / entryBytes
			save = append(save, u)
		}
		return tx.Save(ctx, save)
	})
	if err != nil {
		b.Fatalf("seeding usage: %v", err)
	}

	minute := time.Date(2026, time.March, 14, 15, 9, 0, 0, time.UTC)
	requests := make([]string, batch)
	ops := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ops++
		if ops%100 == 0 {
			minute = minute.Add(time.Minute)
		}
		distinct := make([]string, 0, batch)
		inBatch := make(map[string]bool, batch)
		for i := range requests {
			id := ids[r.IntN(keys)]
			requests[i] = id
			if !inBatch[id] {
				inBatch[id] = true
				distinct = append(distinct, id)
			}
		}
		err := s.UpdateUsage(ctx, func(tx store.UsageTx) error {
			us, err := tx.Load(ctx, distinct, month)
			if err != nil {
				return err
			}
			for _, id := range requests {
				u := us[id]
				if !u.MinuteStart.Equal(minute) {
					u.MinuteStart, u.MinuteCount = minute, 0
				}
				u.MinuteCount++
				u.MonthRequests++
				u.MonthQuestions += perRequest
				for range perRequest {
					u.Seen = binary.LittleEndian.AppendUint64(u.Seen, r.Uint64())
				}
				if len(u.Seen) > maxSeen {
					u.Seen = u.Seen[len(u.Seen)-maxSeen:]
				}
				u.SeenCount = len(u.Seen) / entryBytes
			}
			save := make([]*store.Usage, 0, len(us))
			for _, id := range distinct {
				save = append(save, us[id])
			}
			return tx.Save(ctx, save)
		})
		if err != nil {
			b.Fatalf("UpdateUsage: %v", err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(ops*batch), "ns/request")
}
