package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/hubdev/hub/hub"
)

// StateCheckInterval is how often a running hub checks that its state file
// and lock are still there and still its own: the period of the hub's one
// FileKeeper, which checks every adapter's files too.
const StateCheckInterval = hub.KeepInterval

// KeepState keeps a running hub manageable: on k (or, when k is nil, every
// interval) it makes sure
// the state dir's lock file is still the one l holds (taking the lock
// again on a recreated file when it was removed or replaced) and that the
// state file still names st (rewriting it when it is missing, corrupt,
// unsafe, or names another pid or key). Without this, a deleted or
// corrupted hub.json left a live hub that `hub status` and `hub stop`
// could not reach and `hub start` said was already running. KeepState
// returns when ctx is done.
func KeepState(ctx context.Context, k *hub.FileKeeper, l *Lock, st *State, interval time.Duration, log *slog.Logger) {
	put := func() error { return WriteState(l.dir, st) }
	hub.KeepFiles(ctx, k, interval, log, hub.KeptFile{Name: "the state file", Path: filepath.Join(l.dir, StateFileName), Check: func() (string, func() error) {
		if err := l.ensure(); err != nil {
			// Another hub took the directory over: its state is not ours
			// to overwrite.
			return "lost the state dir's lock, so the file is left alone: " + err.Error(), nil
		}
		got, err := ReadState(l.dir)
		switch {
		case err != nil:
			return err.Error(), put
		case got.PID != st.PID || got.Control != st.Control || !hub.SecretEqual(got.Key, st.Key):
			return "it names another hub", put
		}
		return "", nil
	}})
}

// ensure checks that the state dir's lock file is the one l holds and,
// when it was removed or replaced, creates it again and locks it, so that
// a second hub cannot start beside this one.
func (l *Lock) ensure() error {
	path := filepath.Join(l.dir, LockFileName)
	held, err := l.f.Stat()
	if err != nil {
		return err
	}
	if cur, err := os.Lstat(path); err == nil && os.SameFile(held, cur) {
		return nil
	}
	if err := hub.EnsurePrivateDir(l.dir); err != nil {
		return stateDirError(l.dir, err)
	}
	f, err := hub.OpenPrivate(path, os.O_RDWR|os.O_CREATE, 0o600, false)
	if err != nil {
		return err
	}
	if err := hub.LockFile(f, true, false); err != nil {
		f.Close()
		if errors.Is(err, hub.ErrLocked) {
			return ErrAlreadyRunning
		}
		return fmt.Errorf("locking %s: %v", path, err)
	}
	l.f.Close() // the old file is gone from the directory; its lock with it
	l.f = f
	return nil
}
