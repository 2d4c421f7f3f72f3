//go:build unix

package cputime

import (
	"runtime"
	"syscall"
	"time"
)

// PeakRSSMiB is this process's peak resident set so far (its children's
// are not counted: a benchmark's client process is not the server).
func PeakRSSMiB() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return float64(ru.Maxrss) / (1 << 20) // macOS reports bytes
	}
	return float64(ru.Maxrss) / 1024 // Linux and the BSDs report KiB
}

// Self is the user and system time of every thread of this process.
func Self() time.Duration { return usage(syscall.RUSAGE_SELF) }

// Children is the user and system time of this process's waited-for
// children (rg, a shell's commands).
func Children() time.Duration { return usage(syscall.RUSAGE_CHILDREN) }

func usage(who int) time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(who, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
