// Package cputime measures the CPU a benchmark costs the process (user +
// system time of every thread, plus waited-for children such as rg), which
// is what "costs the server ≤ 100 µs of CPU" means — wall time hides work
// done on other cores and counts time spent waiting.
package cputime

import (
	"syscall"
	"testing"
	"time"
)

// Start resets the benchmark timer and returns a function to call after the
// loop; it reports "cpu-µs/op" and "peak-rss-MiB".
func Start(b *testing.B) func() {
	b.Helper()
	before := used()
	b.ResetTimer()
	return func() {
		b.StopTimer()
		d := used() - before
		b.ReportMetric(float64(d.Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
		b.ReportMetric(PeakRSSMiB(), "peak-rss-MiB")
	}
}

// PeakRSSMiB is this process's peak resident set so far (its children's
// are not counted: a benchmark's client process is not the server).
func PeakRSSMiB() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024 // Linux reports KiB
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
