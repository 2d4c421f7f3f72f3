//go:build unix

package stitchslop

import (
	"errors"
	"os"
	"syscall"

	"github.com/hubdev/hub/hub"
)

// tryLock takes an exclusive lock on path (created 0600) without waiting:
// errLocked when another process holds it. The lock dies with the process.
func tryLock(path string) (func(), error) {
	f, err := hub.OpenPrivate(path, os.O_RDWR|os.O_CREATE, 0o600, false)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
