package childenv

import (
	"strings"
	"testing"
)

// BenchmarkSecretValueAtLimit is the worst value the filter reads: 64 KiB
// (the most it scans) dense with the bytes its rules look for ("=", ";",
// "/", "@"), and URLs up to the most it follows.
func BenchmarkSecretValueAtLimit(b *testing.B) {
	v := strings.Repeat("http://h/hooks/x ", maxURLs-1)
	v += strings.Repeat("a=b;c/d@e ", (maxScannedValue-len(v))/10)
	b.SetBytes(int64(len(v)))
	b.ReportAllocs()
	for b.Loop() {
		if secretValue(v) {
			b.Fatal("stripped")
		}
	}
}
