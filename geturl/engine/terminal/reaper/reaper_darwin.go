package reaper

import (
	"syscall"
	"time"
)

// dupTo makes fd a copy of from.
func dupTo(from, fd int) { syscall.Dup2(from, fd) }

// onlyShellLeft: without a children list per process, ask the listing.
func (r *reaper) onlyShellLeft() bool { return false }

// orphanScan bounds how long the reaper sleeps when nothing wakes it (a
// shell kqueue could not watch is polled at shellPoll).
const (
	orphanScan = time.Second
	shellPoll  = 50 * time.Millisecond
)

// run is the reaper's whole life, one thread blocked in kevent on the
// command pipe and the shell's exit.
//
// macOS has no child subreaper (adopt is ignored): what a command starts
// and then orphans is reparented to launchd, out of the reaper's tree; the
// reaper finds it again by its session (the reaper's own, unless it called
// setsid), which is why ending the tree here also ends the session. A
// process that both left the session and lost its parent (a daemon's
// double fork with setsid) is out of reach, and Hold holds nothing: the
// reaper's only child is the shell.
func run(argv []string, adopt bool) int {
	r := newReaper(false)
	if code, ok := r.start(argv); !ok {
		return code
	}
	kq, err := syscall.Kqueue()
	if err != nil {
		r.killTree()
		return 1
	}
	if !watch(kq, 3, syscall.EVFILT_READ, 0) {
		r.killTree()
		return 1
	}
	wait := syscall.NsecToTimespec(int64(orphanScan))
	if !watch(kq, r.shell, syscall.EVFILT_PROC, syscall.NOTE_EXIT|syscall.NOTE_EXITSTATUS) {
		wait = syscall.NsecToTimespec(int64(shellPoll))
	}
	events := make([]syscall.Kevent_t, 2)
	cmds := make([]byte, 64)
	for {
		n, err := syscall.Kevent(kq, nil, events, &wait)
		if err != nil && err != syscall.EINTR {
			r.killTree()
			return 1
		}
		if r.holding && !r.reapAll() {
			return 0 // the last held process has exited
		}
		for _, ev := range events[:max(n, 0)] {
			if ev.Filter == syscall.EVFILT_PROC && int(ev.Ident) == r.shell && ev.Fflags&syscall.NOTE_EXIT != 0 {
				r.report(syscall.WaitStatus(ev.Data))
			}
		}
		if !r.reported {
			if ws, ok := exitedUnreaped(r.shell); ok {
				r.report(ws)
			}
		}
		for _, ev := range events[:max(n, 0)] {
			if ev.Filter != syscall.EVFILT_READ || ev.Ident != 3 {
				continue
			}
			if r.readCommands(cmds) {
				return 0
			}
		}
	}
}

// watch adds a kevent filter; false when it could not (for a process:
// it has exited already, or is not the caller's child). A process's exit
// is reported once (EV_ONESHOT), so it cannot wake the loop again.
func watch(kq, ident int, filter int16, fflags uint32) bool {
	flags := syscall.EV_ADD | syscall.EV_ENABLE
	if filter == syscall.EVFILT_PROC {
		flags |= syscall.EV_ONESHOT
	}
	var ch [1]syscall.Kevent_t
	syscall.SetKevent(&ch[0], ident, int(filter), flags)
	ch[0].Fflags = fflags
	_, err := syscall.Kevent(kq, ch[:], nil, nil)
	return err == nil
}

// exitedUnreaped returns pid's status if it is a zombie (exited, not
// reaped), from the process listing, which keeps it until it is reaped.
func exitedUnreaped(pid int) (syscall.WaitStatus, bool) {
	k, found := lookup(pid)
	if !found || k.Proc.P_stat != sZomb {
		return 0, false
	}
	return syscall.WaitStatus(k.Proc.P_xstat), true
}

// AwaitExit blocks until pid, a child of the caller, has exited, and
// returns its status without reaping it: until it is reaped its pid cannot
// be given to another process (nor, for a session leader such as the
// reaper, its session id to another session). It waits in kevent
// (NOTE_EXITSTATUS), or polls the listing when kqueue cannot watch pid. A
// pid the listing does not show at all is reported killed, with an error.
func AwaitExit(pid int) (syscall.WaitStatus, error) {
	if kq, err := syscall.Kqueue(); err == nil {
		defer syscall.Close(kq)
		if watch(kq, pid, syscall.EVFILT_PROC, syscall.NOTE_EXIT|syscall.NOTE_EXITSTATUS) {
			events := make([]syscall.Kevent_t, 1)
			for {
				n, err := syscall.Kevent(kq, nil, events, nil)
				if err == syscall.EINTR {
					continue
				}
				if err == nil && n == 1 && events[0].Fflags&syscall.NOTE_EXIT != 0 {
					return syscall.WaitStatus(events[0].Data), nil
				}
				break
			}
		}
	}
	for {
		if ws, ok := exitedUnreaped(pid); ok {
			return ws, nil
		}
		if _, found := lookup(pid); !found {
			return syscall.WaitStatus(syscall.SIGKILL), syscall.ESRCH
		}
		time.Sleep(shellPoll)
	}
}
