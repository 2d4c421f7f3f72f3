package hub

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// sZomb is p_stat of a process that exited and was not reaped yet
// (<sys/proc.h> SZOMB).
const sZomb = 5

// isZombie reads the process state from sysctl kern.proc.pid.
func isZombie(pid int) bool {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	return err == nil && kp.Proc.P_stat == sZomb
}

// FlockHolders is ErrNoLockTable: macOS does not list who holds a lock.
func FlockHolders(os.FileInfo) ([]int, error) { return nil, ErrNoLockTable }

// ProcessCommand returns pid's executable path and argv from sysctl
// kern.procargs2, which macOS shows for the caller's own processes (and
// to root); another user's process is an error.
func ProcessCommand(pid int) (exe string, argv []string, err error) {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return "", nil, err
	}
	return parseProcArgs2(b)
}

// ProcessStart returns when pid started, as an opaque mark (p_starttime
// from sysctl kern.proc.pid, in microseconds): with the pid it names one
// process, not whichever later reuses its number.
func ProcessStart(pid int) (string, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return "", err
	}
	t := kp.Proc.P_starttime
	return strconv.FormatInt(int64(t.Sec)*1e6+int64(t.Usec), 10), nil
}
