//go:build linux || darwin

package reaper

import (
	"errors"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// A binary that links this package becomes the reaper when started under
// its name; it never returns to the program's main. The package imports
// only the standard library on Linux, so its init runs before almost any
// other in the binary: the reaper does not pay for the hub's
// initialisation.
func init() {
	if len(os.Args) == 4 && (os.Args[0] == Arg0 || os.Args[0] == ArgOrphaning) && os.Args[2] == "-c" {
		os.Exit(run(os.Args[1:], os.Args[0] == Arg0))
	}
}

// ArgOrphaning starts the reaper as it runs on macOS, where no process
// adopts its descendants' orphans: on Linux it does not make itself a
// child subreaper. The hub never uses it; the tests run the macOS way of
// finding a command's processes with it, here.
const ArgOrphaning = Arg0 + "-orphaning"

// killBound bounds how long the reaper keeps killing and reaping: a
// process stuck in uninterruptible sleep must not hold the command's slot
// for ever. What is still alive then is left to init.
const killBound = 10 * time.Second

type reaper struct {
	self     int
	shell    int
	status   *os.File
	reported bool
	reaped   bool // the shell: until then its group id is reserved
	holding  bool // Hold: waiting for what left the session to exit
	// adopts: the reaper is a child subreaper, so what the command starts
	// stays below it even after its parent died. Where it is not (macOS,
	// ArgOrphaning), an orphan is found again by the reaper's session, so
	// ending the tree also ends the session.
	adopts bool
}

func newReaper(adopts bool) *reaper {
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	return &reaper{self: os.Getpid(), status: os.NewFile(4, "reaper-status"), adopts: adopts}
}

// start starts the shell (argv) leading its own process group and tells
// the hub its pid, or the errno and the reaper's exit code when it could
// not be started.
func (r *reaper) start(argv []string) (code int, ok bool) {
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		r.line("err " + errnoNumber(err))
		return 127, false
	}
	// Only now, as an ignored signal stays ignored across execve: a stray
	// signal (pkill -f hub, pkill -QUIT for a Go stack dump, the command's
	// kill $PPID) must not end the reaper and set the tree loose. One sent
	// in the instant before this line, and what Go cannot ignore (SIGKILL,
	// SIGSTOP, a forged SIGSEGV), the hub answers by ending the tree
	// itself (terminal's forceEnd).
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGABRT)
	r.shell = pid
	r.line("pid " + strconv.Itoa(pid))
	// Let go of the output pipe: its end of file tells the hub that
	// nothing holds it any more.
	if null, err := syscall.Open(os.DevNull, syscall.O_WRONLY|syscall.O_CLOEXEC, 0); err == nil {
		dupTo(null, 1)
		dupTo(null, 2)
		syscall.Close(null)
	}
	return 0, true
}

// readCommands reads what the hub wrote on fd 3 into buf and acts on
// it. It reports whether the reaper is done: the hub went (or let go, and
// the tree was killed), or a command ended it.
func (r *reaper) readCommands(buf []byte) (done bool) {
	k, err := syscall.Read(3, buf)
	if err == syscall.EINTR || err == syscall.EAGAIN {
		return false
	}
	if k <= 0 { // the hub is gone, or let go
		r.killTree()
		return true
	}
	for _, c := range buf[:k] {
		if r.command(c) {
			return true
		}
	}
	return false
}

// command acts on one command from the hub; done: the reaper is to exit.
func (r *reaper) command(c byte) (done bool) {
	switch c {
	case KillTree:
		r.killTree()
		return true
	case TermSession:
		r.signalGroup(syscall.SIGTERM, syscall.SIGCONT)
		if !r.onlyShellLeft() {
			signalSession(r.self, syscall.SIGTERM, syscall.SIGCONT)
		}
	case KillSession:
		r.signalGroup(syscall.SIGKILL)
		if !r.onlyShellLeft() {
			signalSession(r.self, syscall.SIGKILL)
		}
	case TermTree:
		r.signalGroup(syscall.SIGTERM, syscall.SIGCONT)
		signalTree(r.self, syscall.SIGTERM, syscall.SIGCONT)
		if !r.adopts {
			signalSession(r.self, syscall.SIGTERM, syscall.SIGCONT)
		}
	case Release:
		var ws syscall.WaitStatus
		syscall.Wait4(r.shell, &ws, 0, nil)
		r.reapAll()
		return true
	case Hold:
		var ws syscall.WaitStatus
		syscall.Wait4(r.shell, &ws, 0, nil)
		r.reaped = true
		if !r.reapAll() {
			return true
		}
		r.line("hold") // before this, the hub cannot tell
		r.holding = true
	}
	return false
}

func (r *reaper) line(s string) { r.status.WriteString(s + "\n") }

// report passes the shell's status on, once.
func (r *reaper) report(ws syscall.WaitStatus) {
	if !r.reported {
		r.reported = true
		r.line("exit " + strconv.FormatUint(uint64(ws), 10))
	}
}

// reapAll reaps every exited child, reporting the shell's status; it
// returns false once no child is left.
func (r *reaper) reapAll() bool {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.ECHILD) {
			return false
		}
		if err != nil || pid <= 0 {
			return true
		}
		if pid == r.shell {
			r.reaped = true
			r.report(ws)
		}
	}
}

// signalGroup signals the shell's process group, while the unreaped shell
// keeps its id from being reused. Unlike signalling pids from a listing,
// this reaches every member at once: a member forking as fast as it can is
// caught too (a fork racing a fatal signal fails).
func (r *reaper) signalGroup(sigs ...syscall.Signal) {
	if !r.reaped {
		for _, s := range sigs {
			syscall.Kill(-r.shell, s)
		}
	}
}

// killTree SIGKILLs every descendant, again and again as processes whose
// parents died are reparented here, until none is left (or the bound).
// Where the reaper adopts no orphans (!r.adopts), the rest of its session is
// killed too, until none of it is left either.
func (r *reaper) killTree() {
	deadline := time.Now().Add(killBound)
	for pause := time.Millisecond; ; pause = min(2*pause, 20*time.Millisecond) {
		r.signalGroup(syscall.SIGKILL)
		live := signalTree(r.self, syscall.SIGKILL)
		if !r.adopts {
			live += signalSession(r.self, syscall.SIGKILL)
		}
		done := !r.reapAll()
		if !r.adopts {
			done = done && live == 0
		}
		if done || time.Now().After(deadline) {
			return
		}
		time.Sleep(pause)
	}
}

func errnoNumber(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return strconv.Itoa(int(errno))
	}
	return "0"
}
