package supervisor

import (
	"fmt"

	"github.com/hubdev/hub/hub"
)

// verifyByStart is verifyLockHolder where the OS does not list who holds a lock (macOS,
// Windows): the lock must be held, the private state file beside it must
// name pid, and pid must have started exactly when the hub that wrote the
// file recorded (State.ProcessStart), so a pid reused since, or a file
// naming another process, is refused. Only this user can write the state
// file (ReadState's checks), and a hub writes it only once it holds the
// lock.
func verifyByStart(dir string, pid int) error {
	if !lockHeld(dir) {
		return fmt.Errorf("no process holds %s", LockFileName)
	}
	st, err := ReadState(dir)
	if err != nil {
		return err
	}
	if st.PID != pid {
		return fmt.Errorf("pid %d does not hold %s: the state file names pid %d", pid, LockFileName, st.PID)
	}
	if st.ProcessStart == "" {
		return fmt.Errorf("pid %d does not hold %s: the state file does not say when it started", pid, LockFileName)
	}
	start, err := hub.ProcessStart(pid)
	if err != nil {
		return fmt.Errorf("cannot inspect pid %d: %v", pid, err)
	}
	if start != st.ProcessStart {
		return fmt.Errorf("pid %d does not hold %s: it is a later process that reused the hub's pid", pid, LockFileName)
	}
	return nil
}
