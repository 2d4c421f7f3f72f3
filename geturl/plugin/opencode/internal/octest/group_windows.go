package octest

import (
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// ownGroup starts the server in a process group of its own.
func ownGroup() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// endGroup ends the server. Windows has no SIGTERM: both the polite and
// the forced end terminate the process (its children are not reached).
func endGroup(p *os.Process, kill bool) { _ = p.Kill() }
