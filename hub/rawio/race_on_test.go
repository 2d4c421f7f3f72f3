//go:build race

package rawio

// raceEnabled: under the race detector sockets are read and written through
// the syscall package (race_linux.go), whose allocations are its own, so
// allocation counts are not asserted.
const raceEnabled = true
