package main

import (
	"fmt"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// Sizing of --memory-limit auto: the Go heap may grow to 1.25 times the
// live heap plus memoryHeadroom for requests in flight, and never below
// memoryFloor. It is set from the live heap with the bank loaded (about 90
// MiB with the 13,000-question synthetic bank: under 150 MB of RSS with the
// binary's own pages, BENCHMARKS.md "Service") and then follows the live
// heap as the stores' caches of usage grow (followLiveHeap), so that the
// collector never works against a limit the live data has outgrown.
// Without a limit the collector lets the heap grow to twice its live size.
const (
	memoryHeadroom = 48 << 20
	memoryFloor    = 64 << 20
)

// memoryLimit decides the soft memory limit of certbank serve from the
// --memory-limit value, the GOMEMLIMIT environment variable (which wins:
// the runtime has applied it already) and the live heap after loading. It
// returns 0 to leave the runtime's setting alone, and why it chose.
func memoryLimit(flag, env string, live uint64) (int64, string) {
	switch {
	case env != "":
		return 0, "GOMEMLIMIT is set"
	case flag == "off":
		return 0, "--memory-limit off"
	case flag == "auto":
		return autoLimit(live), "auto: 1.25 × live heap + 48 MiB, following the live heap"
	}
	n, _ := parseSize(flag) // validated before loading
	return n, "--memory-limit"
}

// checkMemoryLimit validates a --memory-limit value.
func checkMemoryLimit(flag string) error {
	if flag == "auto" || flag == "off" {
		return nil
	}
	n, err := parseSize(flag)
	if err != nil {
		return usagef("--memory-limit %q: %v; give auto, off, or a size such as 256MiB", flag, err)
	}
	if n < 32<<20 {
		return usagef("--memory-limit %q is below 32MiB: the bank alone needs more; give auto or a larger size", flag)
	}
	return nil
}

// parseSize parses a byte size with an optional KiB, MiB or GiB suffix
// (GOMEMLIMIT's units).
func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("not a size")
	}
	return n * mult, nil
}

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

func autoLimit(live uint64) int64 {
	return max(int64(live)+int64(live)/4+memoryHeadroom, memoryFloor)
}

// followLiveHeap re-sizes the auto memory limit every few seconds from the
// live heap of the last collection, until stop is closed.
func followLiveHeap(stop <-chan struct{}) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			debug.SetMemoryLimit(autoLimit(liveHeap()))
		}
	}
}
