// Package race reports whether the race detector is built into the
// program. Tests that count allocations skip their bounds under it: the
// detector allocates for its own bookkeeping.
package race
