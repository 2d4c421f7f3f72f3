package hub

import (
	"os"
	"runtime/debug"
)

// DefaultMemoryLimit is the soft memory limit of a serving hub process
// (`hub run`, and a bridge served on its own) when GOMEMLIMIT sets none:
// past it the garbage collector works harder instead of letting a burst
// of requests double the heap (GOGC's pace). It is soft: the runtime
// exceeds it rather than fail, and spends at most about half the CPU
// collecting near it. The requests themselves are bounded elsewhere;
// this keeps what they leave behind from piling up.
const DefaultMemoryLimit int64 = 1 << 30

// SetMemoryLimit gives the process its soft memory limit and returns it,
// with where it came from: "GOMEMLIMIT" when that variable is set (the
// runtime has applied it; nothing is changed), else "default"
// (DefaultMemoryLimit). It is the one place the hub decides it.
func SetMemoryLimit() (limit int64, from string) {
	if v, ok := os.LookupEnv("GOMEMLIMIT"); ok && v != "" {
		return debug.SetMemoryLimit(-1), "GOMEMLIMIT"
	}
	debug.SetMemoryLimit(DefaultMemoryLimit)
	return DefaultMemoryLimit, "default"
}
