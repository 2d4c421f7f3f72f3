package terminal

import (
	"strconv"
	"syscall"
)

// signalName: Windows ends processes without signals; a WaitStatus there
// is never Signaled, so this names only what Go's emulation reports.
func signalName(s syscall.Signal) string { return "signal " + strconv.Itoa(int(s)) }
