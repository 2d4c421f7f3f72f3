// Package cputime measures the CPU a benchmark costs the process (user +
// system time of every thread, plus waited-for children such as rg), which
// is what "costs the server ≤ 100 µs of CPU" means — wall time hides work
// done on other cores and counts time spent waiting.
package cputime

import (
	"testing"
)

// Start resets the benchmark timer and returns a function to call after the
// loop; it reports "cpu-µs/op" and "peak-rss-MiB".
func Start(b *testing.B) func() {
	b.Helper()
	before := Self() + Children()
	b.ResetTimer()
	return func() {
		b.StopTimer()
		d := Self() + Children() - before
		b.ReportMetric(float64(d.Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
		b.ReportMetric(PeakRSSMiB(), "peak-rss-MiB")
	}
}
