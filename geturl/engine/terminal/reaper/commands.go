package reaper

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// The reaper is the hub's own executable, started again under the name
// Arg0 with the shell's argv after it (SHELL -c COMMAND). It makes itself
// a child subreaper (PR_SET_CHILD_SUBREAPER), so every process the command
// starts stays its descendant even after leaving the shell's process group
// or session (setsid, a daemon's double fork): a timeout or a stop can then
// end the whole tree the command owns, not just the group. (On macOS,
// which has none, it finds orphans by its session instead: see run in
// reaper_darwin.go.)
//
// It talks to the hub over two pipes. On fd 3 it reads one-byte commands
// (TermGroup and the others); end of file means the hub is gone or gave up on it, and the
// whole tree is killed. On fd 4 it writes lines: "pid N" once the shell
// runs (or "err ERRNO" when it could not start), then "exit W" with the
// shell's raw wait status once it has exited. The shell is not reaped until
// the hub has decided what to do with its group, so the group id (the
// shell's pid) cannot be reused meanwhile.
const Arg0 = "hub-terminal-reaper"

// Commands from the hub.
const (
	// TermSession and KillSession end what a shell that exited on its own
	// left: every process still in the reaper's session (its background
	// jobs, whatever group they moved to), SIGTERM and SIGCONT, or SIGKILL.
	TermSession = 'S'
	KillSession = 's'
	TermTree    = 'T' // SIGTERM and SIGCONT to every descendant
	KillTree    = 'K' // SIGKILL every descendant until none is left, then exit
	Release     = 'R' // reap the shell and exit: what left the session lives on
	// Hold reaps the shell and keeps what left the session (a daemon that
	// called setsid) in the tree until it has all exited, then exits; a
	// later KillTree, or the hub's going away, still ends it. It writes
	// the line "hold" when something is held, and exits at once when
	// nothing is. For background commands, which must not outlive their
	// session.
	Hold = 'H'
)

// ReadPid reads the reaper's first line: "pid N", or "err ERRNO" when the
// shell could not be started.
func ReadPid(status *bufio.Reader) (int, error) {
	line, err := status.ReadString('\n')
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return 0, err
	}
	if err != nil {
		return 0, errors.New("the command's reaper exited before starting the shell")
	}
	word, arg, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
	n, err := strconv.Atoi(arg)
	switch {
	case err != nil || n <= 0:
	case word == "err":
		return 0, syscall.Errno(n)
	case word == "pid":
		return n, nil
	}
	return 0, errors.New("the command's reaper said " + strconv.Quote(line))
}

// ReadExit reads the reaper's second line, the shell's wait status. false:
// the reaper ended without saying (someone killed it).
func ReadExit(status *bufio.Reader) (syscall.WaitStatus, bool) {
	line, err := status.ReadString('\n')
	if err != nil {
		return waitStatus(0), false
	}
	v, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "exit ")
	n, err := strconv.ParseUint(v, 10, 32)
	return waitStatus(uint32(n)), ok && err == nil
}
