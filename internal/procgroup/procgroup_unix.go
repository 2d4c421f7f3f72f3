//go:build unix

package procgroup

import (
	"os"
	"syscall"
)

// Attr is the SysProcAttr that starts a child in a group of its own.
func Attr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// End signals p's whole group: SIGTERM, or SIGKILL when kill is set.
func End(p *os.Process, kill bool) error {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	return syscall.Kill(-p.Pid, sig)
}
