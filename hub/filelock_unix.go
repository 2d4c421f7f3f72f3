//go:build unix

package hub

import (
	"errors"
	"os"
	"syscall"
)

// LockFile takes an advisory lock on f, exclusive or shared. With wait it
// blocks until the lock is free; without, it fails at once with ErrLocked.
// The lock goes with the open file (flock here, LockFileEx on Windows):
// closing f, or the process ending, drops it, so a crash never wedges the
// next process.
func LockFile(f *os.File, exclusive, wait bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if !wait {
		how |= syscall.LOCK_NB
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		switch {
		case err == syscall.EINTR:
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return ErrLocked
		}
		return err
	}
}

// UnlockFile drops the lock LockFile took on f.
func UnlockFile(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
