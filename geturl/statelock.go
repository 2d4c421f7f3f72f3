package geturl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hubdev/hub/geturl/control"
	"github.com/hubdev/hub/hub"
)

// lockStateDir takes the state directory's lock for one run of Serve: one
// geturl per state dir. Two would share registry.json (each saving its own
// view over the other's changes) and control.json (the second takes it
// over, and removes it when it stops, so the CLI loses the first). The
// lock is released when the returned file is closed (or the process ends).
func lockStateDir(d hub.Dirs) (*os.File, error) {
	dir := StateDir(d)
	if err := hub.EnsurePrivateDir(dir); err != nil {
		return nil, err
	}
	f, err := hub.OpenPrivate(filepath.Join(dir, "serve.lock"), os.O_RDWR|os.O_CREATE, 0o600, false)
	if err != nil {
		return nil, err
	}
	if err := hub.LockFile(f, true, false); err != nil {
		f.Close()
		if errors.Is(err, hub.ErrLocked) {
			busy := &stateBusyError{dir: dir}
			if cf, err := control.ReadFile(d); err == nil {
				busy.holder = &cf
			}
			return nil, busy
		}
		return nil, fmt.Errorf("locking %s: %v", f.Name(), err)
	}
	return f, nil
}

// stateBusyError is lockStateDir's answer when another geturl holds the
// state directory; holder is what its control file says, when readable.
type stateBusyError struct {
	dir    string
	holder *control.File
}

func (e *stateBusyError) Error() string {
	who := "another geturl"
	if e.holder != nil {
		who += fmt.Sprintf(" (pid %d, control port %d)", e.holder.PID, e.holder.ControlPort)
	}
	return fmt.Sprintf("%s already serves %s; stop it first, or give this one other XDG dirs", who, e.dir)
}
