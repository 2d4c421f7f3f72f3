package cputime

import (
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// PeakRSSMiB is this process's peak working set so far.
func PeakRSSMiB() float64 {
	var c processMemoryCounters
	c.cb = uint32(unsafe.Sizeof(c))
	r, _, _ := windows.NewLazySystemDLL("psapi.dll").NewProc("GetProcessMemoryInfo").Call(
		uintptr(windows.CurrentProcess()), uintptr(unsafe.Pointer(&c)), uintptr(c.cb))
	if r == 0 {
		return 0
	}
	return float64(c.peakWorkingSetSize) / (1 << 20)
}

// Children is 0: Windows keeps no total for waited-for children, so a
// child's (rg's) CPU is not counted.
func Children() time.Duration { return 0 }

// Self is this process's user and kernel time.
func Self() time.Duration {
	var creation, exit, kernel, user windows.Filetime
	if windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user) != nil {
		return 0
	}
	// FILETIME counts 100 ns intervals.
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration((ticks(kernel) + ticks(user)) * 100)
}

// processMemoryCounters is PROCESS_MEMORY_COUNTERS (psapi.h).
type processMemoryCounters struct {
	cb                         uint32
	pageFaultCount             uint32
	peakWorkingSetSize         uintptr
	workingSetSize             uintptr
	quotaPeakPagedPoolUsage    uintptr
	quotaPagedPoolUsage        uintptr
	quotaPeakNonPagedPoolUsage uintptr
	quotaNonPagedPoolUsage     uintptr
	pagefileUsage              uintptr
	peakPagefileUsage          uintptr
}
