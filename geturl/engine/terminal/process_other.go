//go:build !linux && !darwin && !windows

package terminal

import (
	"runtime"
	"time"
)

// Supported says whether this OS can run terminal commands. Off Linux, macOS
// and Windows it cannot yet: the terminal's guarantee that a timeout, a stop or
// the hub's death ends everything a command started rests on the reaper,
// and this build has none for runtime.GOOS (the BSDs' kinfo_proc differs
// from macOS's). The error names the OS; the
// tool answers it to the agent and hub status shows it.
func Supported() error { return &UnsupportedError{GOOS: runtime.GOOS} }

// defaultShell is the POSIX shell (never started here).
func defaultShell() string { return "/bin/sh" }

// spawn refuses: see Supported.
func spawn(spawnSpec, Clock, time.Duration, time.Duration) (*proc, error) { return nil, Supported() }

// forceEndReaper is never reached: no proc is made here.
func (p *proc) forceEndReaper() {}
