//go:build unix

package cputime

import (
	"runtime"
	"syscall"
	"time"
)

// PeakRSSMiB is this process's peak resident set so far (its children's
// are not counted: a benchmark's client process is not the server).
func PeakRSSMiB() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return float64(ru.Maxrss) / (1 << 20) // macOS reports bytes
	}
	return float64(ru.Maxrss) / 1024 // Linux and the BSDs report KiB
}

func used() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			continue
		}
		total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return total
}
