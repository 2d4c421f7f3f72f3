package reaper

import "syscall"

// waitStatus: Windows has only an exit code.
func waitStatus(raw uint32) syscall.WaitStatus { return syscall.WaitStatus{ExitCode: raw} }
