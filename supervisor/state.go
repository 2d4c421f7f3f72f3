package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
)

// Files in the hub's state directory.
const (
	StateFileName = "hub.json" // 0600: pid, control endpoint, key, adapters
	LockFileName  = "hub.lock" // locked (flock, LockFileEx) for the life of a running hub
	LogFileName   = "hub.log"  // 0600: JSON lines of a detached hub
)

// State is what a running hub publishes for `hub status` and `hub stop`.
type State struct {
	PID     int       `json:"pid"`
	Control string    `json:"control"` // base URL of the control endpoint
	Key     string    `json:"key,omitempty"`
	Started time.Time `json:"started"`
	Config  string    `json:"config"`
	Version string    `json:"version"`
	// ShutdownSeconds is lifecycle.shutdown_seconds: `hub stop` waits at
	// least this long for a graceful stop before it signals.
	ShutdownSeconds int               `json:"shutdownSeconds,omitempty"`
	Adapters        []adapters.Status `json:"adapters"`
	// ProcessStart is hub.ProcessStart of PID, written by the hub itself:
	// where the OS does not list a lock's holders (macOS, Windows),
	// VerifyHub knows the pid is still this hub, not a reuse, by it.
	ProcessStart string `json:"processStart,omitempty"`

	// file is where ReadState read it, for messages ("" if it did not).
	file string
}

// ErrAlreadyRunning is wrapped by AcquireLock when another hub holds the lock.
var ErrAlreadyRunning = errors.New("already running")

// Lock is the running hub's hold on the state directory.
type Lock struct {
	dir string
	f   *os.File
}

// AcquireLock takes the state directory's lock without blocking. If another
// hub holds it, the error says "already running (pid N)". A state dir or
// lock file another user could have planted is refused.
func AcquireLock(dir string) (*Lock, error) {
	if err := hub.EnsurePrivateDir(dir); err != nil {
		return nil, stateDirError(dir, err)
	}
	f, err := hub.OpenPrivate(filepath.Join(dir, LockFileName), os.O_RDWR|os.O_CREATE, 0o600, false)
	if err != nil {
		return nil, stateDirError(dir, err)
	}
	if err := hub.LockFile(f, true, false); err != nil {
		f.Close()
		if errors.Is(err, hub.ErrLocked) {
			if st, rerr := ReadState(dir); rerr == nil {
				return nil, fmt.Errorf("%w (pid %d)", ErrAlreadyRunning, st.PID)
			}
			return nil, ErrAlreadyRunning
		}
		return nil, fmt.Errorf("locking %s: %v", f.Name(), err)
	}
	return &Lock{dir: dir, f: f}, nil
}

// stateDirError names the state dir; an unsafe-file refusal already names
// its file and the fix. A path error's own path is dropped when it is the
// dir, and otherwise kept: "state dir X: is a directory" said nothing of
// the hub.lock that was one.
func stateDirError(dir string, err error) error {
	if errors.Is(err, hub.ErrUnsafeFile) {
		return err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		if filepath.Clean(pe.Path) != filepath.Clean(dir) {
			return fmt.Errorf("state dir %s: %s: %w (move it aside)", dir, filepath.Base(pe.Path), pe.Err)
		}
		err = pe.Err
	}
	return fmt.Errorf("state dir %s: %w", dir, err)
}

// Release drops the lock (idempotent).
func (l *Lock) Release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// LockHeld reports whether some process holds the state dir's lock: with
// no state file beside it, a hub is starting (or stopping).
func LockHeld(dir string) bool { return lockHeld(dir) }

// lockHeld reports whether some process holds the state dir's lock.
func lockHeld(dir string) bool {
	f, err := hub.OpenPrivate(filepath.Join(dir, LockFileName), os.O_RDONLY, 0, false)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := hub.LockFile(f, false, false); err != nil {
		return errors.Is(err, hub.ErrLocked)
	}
	hub.UnlockFile(f)
	return false
}

// WriteState publishes st atomically with mode 0600.
func WriteState(dir string, st *State) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return hub.WriteFileAtomic(filepath.Join(dir, StateFileName), append(b, '\n'), 0o600)
}

// maxStateFile bounds what ReadState is willing to parse.
const maxStateFile = 1 << 20

// ReadState reads the state file. It does not say whether the hub is alive;
// use Probe for that. A file another user could have planted or read (a
// link, another owner, loose mode) is refused: it holds the control key.
func ReadState(dir string) (*State, error) {
	b, err := hub.ReadPrivateFile(filepath.Join(dir, StateFileName), maxStateFile)
	if err != nil {
		return nil, err
	}
	st := State{file: filepath.Join(dir, StateFileName)}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("state file %s is corrupt: %v", filepath.Join(dir, StateFileName), err)
	}
	if st.PID <= 0 || !loopbackControl(st.Control) {
		return nil, fmt.Errorf("state file %s is corrupt: bad pid or control address", filepath.Join(dir, StateFileName))
	}
	return &st, nil
}

// loopbackControl reports whether control is exactly what a hub writes,
// http://127.0.0.1:<port>: a prefix check let userinfo move the host
// ("http://127.0.0.1:1@192.0.2.1:80"), and the key would go there.
func loopbackControl(control string) bool {
	port, ok := strings.CutPrefix(control, "http://127.0.0.1:")
	n, err := strconv.Atoi(port)
	return ok && err == nil && n > 0 && n <= 65535 && strconv.Itoa(n) == port
}

// RemoveStateIfOurs deletes the state file only if it still names pid, so
// a hub never deletes a newer hub's file.
func RemoveStateIfOurs(dir string, pid int) {
	if st, err := ReadState(dir); err == nil && st.PID == pid {
		os.Remove(filepath.Join(dir, StateFileName))
	}
}

// Liveness is what Probe found.
type Liveness int

const (
	NotRunning Liveness = iota // no state file
	Running                    // state file, live pid, lock held
	Stale                      // a state file nobody stands behind
	Unsafe                     // the state dir or file is not private: refused
)

// Probe reads the state file and decides, without trusting it, whether a
// hub is running: the pid must exist (signal 0), hold the lock (a recycled
// pid does not) and be a hub (VerifyHub). For Stale and Unsafe, the
// message says why.
func Probe(dir string) (*State, Liveness, string) {
	if err := hub.CheckPrivateDir(dir); errors.Is(err, os.ErrNotExist) {
		return nil, NotRunning, "not running"
	} else if errors.Is(err, hub.ErrUnsafeFile) {
		return nil, Unsafe, err.Error()
	}
	st, err := ReadState(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if lockHeld(dir) {
			return nil, Stale, "the hub lock is held but there is no state file (a hub is starting or stopping)"
		}
		return nil, NotRunning, "not running"
	case errors.Is(err, hub.ErrUnsafeFile):
		return nil, Unsafe, err.Error()
	case err != nil:
		return nil, Stale, err.Error()
	}
	if !hub.PIDAlive(st.PID) {
		return st, Stale, fmt.Sprintf("stale state file: pid %d is not running (it was killed or crashed)", st.PID)
	}
	if err := VerifyHub(dir, st.PID); err != nil {
		return st, Stale, fmt.Sprintf("stale state file: pid %d is alive but is not a hub holding %s (%v)", st.PID, LockFileName, err)
	}
	return st, Running, "running (pid " + strconv.Itoa(st.PID) + ")"
}

// VerifyHub checks that pid is a hub holding dir's lock, before anyone
// signals it or trusts what it serves: the pid must hold the lock on this
// very hub.lock (verifyLockHolder: the lock table on Linux, elsewhere the
// lock held and the state file's record of when pid started), and the
// process must run this executable (perhaps since replaced by a
// reinstall) or be a `hub run`. A planted hub.json naming a victim's pid
// fails both.
func VerifyHub(dir string, pid int) error {
	if err := verifyLockHolder(dir, pid); err != nil {
		return err
	}
	exe, argv, err := hub.ProcessCommand(pid)
	if err != nil {
		return fmt.Errorf("cannot inspect pid %d: %v", pid, err)
	}
	self, _ := os.Executable()
	if runsHub(exe, argv, self) {
		return nil
	}
	if exe == "" && len(argv) > 0 {
		exe = argv[0]
	}
	return fmt.Errorf("pid %d runs %s, not hub", pid, exe)
}

// runsHub judges what hub.ProcessCommand showed of a process: it runs
// self, this executable, or is a `hub run`. A hub is undumpable, so to its
// user's other processes its executable is hidden (exe is ""): then its
// argv names it, the way `hub start` starts it (self's path) or a user
// types it.
func runsHub(exe string, argv []string, self string) bool {
	if exe != "" && samePath(exe, self) {
		return true
	}
	return len(argv) >= 2 && argv[1] == "run" && (filepath.Base(argv[0]) == "hub" ||
		exe == "" && self != "" && filepath.Base(argv[0]) == filepath.Base(self))
}
