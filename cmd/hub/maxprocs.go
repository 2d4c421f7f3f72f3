package main

import (
	"os"
	"runtime"
	"strconv"
)

// defaultMaxProcs is the most Ps (OS threads running Go code at once) a
// hub process takes by default: a loopback daemon's requests are small
// and mostly wait, and each extra P is another thread the scheduler wakes
// and spins to hand a request over; the server process costs least per
// request with one. The README's performance section has the
// measurements behind the number.
const defaultMaxProcs = 1

// setMaxProcs gives the process its GOMAXPROCS and returns it, with where
// it came from: "GOMAXPROCS" when that variable holds a positive number
// (the runtime has applied it; nothing is changed), else "config" when
// configured (runtime.max_procs) is above 0, else "default": the
// runtime's own reading of the CPUs (and of a container's CPU limit),
// capped at defaultMaxProcs. It is the one place the hub decides it.
func setMaxProcs(configured int) (n int, from string) {
	if v, ok := os.LookupEnv("GOMAXPROCS"); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return runtime.GOMAXPROCS(0), "GOMAXPROCS"
		}
	}
	if configured > 0 {
		runtime.GOMAXPROCS(configured)
		return configured, "config"
	}
	// Back to the runtime's reading first: an earlier call may have
	// lowered it, and the cap applies to what the machine offers.
	runtime.SetDefaultGOMAXPROCS()
	n = min(defaultMaxProcs, runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(n)
	return n, "default"
}
