package hub

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// LockFile takes an advisory lock on f, exclusive or shared. With wait it
// blocks until the lock is free; without, it fails at once with ErrLocked.
// It locks f's first byte with LockFileEx (a lock file is empty, and a
// range past the end may be locked): closing f, or the process ending,
// drops it, as a flock does.
func LockFile(f *os.File, exclusive, wait bool) error {
	var flags uint32
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	if !wait {
		flags |= windows.LOCKFILE_FAIL_IMMEDIATELY
	}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, new(windows.Overlapped))
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return ErrLocked
	}
	return err
}

// UnlockFile drops the lock LockFile took on f.
func UnlockFile(f *os.File) {
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped))
}
