package hub

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/windows"
)

// stillActive is the exit code GetExitCodeProcess reports for a running
// process (STILL_ACTIVE).
const stillActive = 259

// PIDAlive opens the process to ask whether it has exited. A process the
// caller may not open (another user's, a protected one) exists.
func PIDAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return true
	}
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	return code == stillActive
}

// FlockHolders is ErrNoLockTable: Windows does not list who holds a
// LockFileEx lock.
func FlockHolders(os.FileInfo) ([]int, error) { return nil, ErrNoLockTable }

// ProcessCommand returns pid's executable path (QueryFullProcessImageName).
// Windows keeps a process's command line in its own memory, which this
// does not read: argv is nil, and the executable is what identifies it.
func ProcessCommand(pid int) (exe string, argv []string, err error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return "", nil, err
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(h, 0, &buf[0], &n); err != nil {
		return "", nil, err
	}
	return windows.UTF16ToString(buf[:n]), nil, nil
}

// ProcessStart returns when pid was created, as an opaque mark (its
// creation FILETIME, in 100 ns units): with the pid it names one process,
// not whichever later reuses its number.
func ProcessStart(pid int) (string, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return "", err
	}
	defer windows.CloseHandle(h)
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return "", err
	}
	return strconv.FormatUint(uint64(created.HighDateTime)<<32|uint64(created.LowDateTime), 10), nil
}
