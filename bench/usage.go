package bench

import "time"

// Usage is what the OS accounts to one process so far.
type Usage struct {
	// CPU is user + system time of every thread, live and exited, and
	// of the children it waited for (/proc/PID/stat, clock-tick
	// resolution: 10 ms).
	CPU time.Duration
	// Children is the waited-for children's part of CPU (a search
	// that runs rg).
	Children time.Duration
	// Run is the sum of the live threads' on-CPU time in nanoseconds
	// (/proc/PID/task/*/schedstat): exact, but it forgets threads that
	// exited, so it suits idle windows, where none do.
	Run time.Duration
	// Switches is voluntary + involuntary context switches of every live
	// thread: each is a wake-up or a preemption.
	Switches int64
	// RSSKiB and HWMKiB are the resident set now and its peak.
	RSSKiB, HWMKiB int64
	// AnonKiB and FileKiB split RSSKiB: the heap, stacks and runtime
	// (RssAnon) and the mapped pages of the binary and other files
	// (RssFile); shared memory is the rest.
	AnonKiB, FileKiB int64
}

// ReadUsage reads pid's usage; errors.ErrUnsupported where the OS does not
// expose it to this package.
func ReadUsage(pid int) (Usage, error) { return readUsage(pid) }

// clockTick is the resolution of Usage.CPU (USER_HZ is 100 on Linux).
const clockTick = 10 * time.Millisecond
