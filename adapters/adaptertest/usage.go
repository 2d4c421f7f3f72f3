package adaptertest

import (
	"testing"

	"github.com/hubdev/hub/internal/cputime"
)

// MeasureProcess resets b's timer and returns a function to call after
// the loop. It reports the CPU the process spent per op (user and system
// time of every thread, so an in-process round trip counts both of its
// ends: "process-cpu-µs/op") and the process's peak resident set so far
// ("peak-rss-MiB"); wall time alone hides work done on other cores.
func MeasureProcess(b *testing.B) func() {
	b.Helper()
	before := cputime.Self()
	b.ResetTimer()
	return func() {
		b.StopTimer()
		b.ReportMetric(float64((cputime.Self()-before).Nanoseconds())/1e3/float64(b.N), "process-cpu-µs/op")
		b.ReportMetric(cputime.PeakRSSMiB(), "peak-rss-MiB")
	}
}
