//go:build unix

package supervisor

import (
	"errors"
	"os"
	"syscall"
)

// errLocked is lockFile's answer when another open file holds the lock.
var errLocked = errors.New("locked by another process")

// lockFile takes f's flock without blocking, exclusive or shared. A lock
// goes with the open file: closing f drops it.
func lockFile(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}

func unlockFile(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// samePath compares executable paths as the file system does.
func samePath(a, b string) bool { return a == b }
