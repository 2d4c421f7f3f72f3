package adaptertest

import (
	"syscall"
	"testing"
	"time"
)

// MeasureProcess resets b's timer and returns a function to call after
// the loop. It reports the CPU the process spent per op (user and system
// time of every thread, so an in-process round trip counts both of its
// ends: "process-cpu-µs/op") and the process's peak resident set so far
// ("peak-rss-MiB"); wall time alone hides work done on other cores.
func MeasureProcess(b *testing.B) func() {
	b.Helper()
	before, _ := usage()
	b.ResetTimer()
	return func() {
		b.StopTimer()
		after, peak := usage()
		b.ReportMetric(float64((after-before).Nanoseconds())/1e3/float64(b.N), "process-cpu-µs/op")
		b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MiB")
	}
}

// usage is the process's CPU time and peak RSS in bytes.
func usage() (time.Duration, int64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Maxrss << 10 // Linux reports KiB
}
