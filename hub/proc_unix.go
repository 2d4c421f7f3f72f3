//go:build unix

package hub

import (
	"errors"
	"syscall"
)

// PIDAlive tests existence with signal 0, which sends nothing. A process
// owned by another user (EPERM) exists. A zombie (exited, not yet reaped)
// counts as dead: it will never serve anything again.
func PIDAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !isZombie(pid)
}
