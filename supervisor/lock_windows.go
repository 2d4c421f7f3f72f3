package supervisor

import (
	"errors"
	"os"
	"strings"

	"golang.org/x/sys/windows"
)

// errLocked is lockFile's answer when another open file holds the lock.
var errLocked = errors.New("locked by another process")

// lockFile takes a LockFileEx lock on f's first byte without blocking,
// exclusive or shared. A lock goes with the handle: closing f (or the
// process ending) drops it, as a flock does. The byte lies past the end
// of the empty hub.lock, which LockFileEx allows; nothing reads it.
func lockFile(f *os.File, exclusive bool) error {
	var flags uint32 = windows.LOCKFILE_FAIL_IMMEDIATELY
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, new(windows.Overlapped))
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return errLocked
	}
	return err
}

func unlockFile(f *os.File) {
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped))
}

// samePath compares executable paths as NTFS does: without case.
func samePath(a, b string) bool { return strings.EqualFold(a, b) }
