package procgroup

import (
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// Attr is the SysProcAttr that starts a child in a group of its own.
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// End terminates p: Windows has no SIGTERM, so both ends are the same,
// and the child's own children are not reached.
func End(p *os.Process, kill bool) error { return p.Kill() }
