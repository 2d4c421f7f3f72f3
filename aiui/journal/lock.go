package journal

import (
	"os"
	"syscall"
)

// fileLock is an exclusive flock on a side file: the record itself is
// replaced by compaction, so a lock on it would not outlive a rename.
type fileLock struct{ f *os.File }

func openLock(path string) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return &fileLock{f: f}, nil
}

func (l *fileLock) lock() error {
	for {
		err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func (l *fileLock) unlock() { syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN) }

func (l *fileLock) close() error { return l.f.Close() }
