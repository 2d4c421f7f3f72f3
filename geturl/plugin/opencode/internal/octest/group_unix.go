//go:build unix

package octest

import (
	"os"
	"syscall"
)

// ownGroup starts the server in a process group of its own.
func ownGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// endGroup signals the server's whole group: SIGTERM, or SIGKILL.
func endGroup(p *os.Process, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-p.Pid, sig)
}
