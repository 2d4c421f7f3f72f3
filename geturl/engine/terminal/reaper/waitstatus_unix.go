//go:build unix

package reaper

import "syscall"

// waitStatus is the raw wait status the reaper reports as a WaitStatus.
func waitStatus(raw uint32) syscall.WaitStatus { return syscall.WaitStatus(raw) }
