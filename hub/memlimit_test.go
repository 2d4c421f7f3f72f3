package hub

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestSetMemoryLimit: without GOMEMLIMIT a serving process gets
// DefaultMemoryLimit (a fresh process has none: math.MaxInt64); with it,
// the limit the runtime took from it stays.
func TestSetMemoryLimit(t *testing.T) {
	orig := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(orig) })

	t.Setenv("GOMEMLIMIT", "")
	debug.SetMemoryLimit(math.MaxInt64)
	if limit, from := SetMemoryLimit(); limit != DefaultMemoryLimit || from != "default" || debug.SetMemoryLimit(-1) != DefaultMemoryLimit {
		t.Fatalf("without GOMEMLIMIT: %d from %s, in effect %d", limit, from, debug.SetMemoryLimit(-1))
	}

	t.Setenv("GOMEMLIMIT", "512MiB")
	debug.SetMemoryLimit(512 << 20) // what the runtime read at start
	if limit, from := SetMemoryLimit(); limit != 512<<20 || from != "GOMEMLIMIT" || debug.SetMemoryLimit(-1) != 512<<20 {
		t.Fatalf("with GOMEMLIMIT: %d from %s, in effect %d", limit, from, debug.SetMemoryLimit(-1))
	}
}
