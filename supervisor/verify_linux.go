package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/hubdev/hub/hub"
)

// verifyLockHolder: /proc/locks must show pid holding the flock on this
// very hub.lock (matched by device and inode).
func verifyLockHolder(dir string, pid int) error {
	f, err := hub.OpenPrivate(filepath.Join(dir, LockFileName), os.O_RDONLY, 0, false)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	f.Close()
	if err != nil {
		return err
	}
	holders, err := hub.FlockHolders(fi)
	if err != nil {
		return fmt.Errorf("cannot read the lock table: %v", err)
	}
	if !slices.Contains(holders, pid) {
		return fmt.Errorf("pid %d does not hold %s", pid, LockFileName)
	}
	return nil
}
