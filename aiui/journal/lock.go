package journal

import (
	"os"

	"github.com/hubdev/hub/hub"
)

// fileLock is an exclusive lock on a side file: the record itself is
// replaced by compaction, so a lock on it would not outlive a rename.
type fileLock struct{ f *os.File }

func openLock(path string) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return &fileLock{f: f}, nil
}

func (l *fileLock) lock() error { return hub.LockFile(l.f, true, true) }

func (l *fileLock) unlock() { hub.UnlockFile(l.f) }

func (l *fileLock) close() error { return l.f.Close() }
