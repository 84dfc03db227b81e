//go:build unix

package x402

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, user and system. The
// benchmarks report it per operation because wall time is unreliable on a
// shared machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
