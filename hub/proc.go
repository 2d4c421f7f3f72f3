package hub

import (
	"bytes"
	"errors"
	"os"
	"strconv"
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

// isZombie reads the process state from /proc/<pid>/stat.
func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state letter follows the ")" that closes the command name.
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}
