package reaper

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// kinfoOf copies what the reaper reads out of a kinfo_proc.
func kinfoOf(k *unix.KinfoProc) kinfo {
	return kinfo{
		pid: k.Proc.P_pid, ppid: k.Eproc.Ppid, pgid: k.Eproc.Pgid, stat: k.Proc.P_stat,
		startSec: int64(k.Proc.P_starttime.Sec), startUsec: int32(k.Proc.P_starttime.Usec),
	}
}

// sessionOf is pid's session id, or -1 (it names no session) when the
// process is gone.
func sessionOf(pid int) int {
	sid, err := unix.Getsid(pid)
	if err != nil {
		return -1
	}
	return sid
}

// scan reads every process in one sysctl (kern.proc.all), zombies
// included, with each one's session from getsid.
func scan() []proc {
	ks, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil
	}
	out := make([]proc, 0, len(ks))
	for i := range ks {
		k := kinfoOf(&ks[i])
		out = append(out, k.proc(sessionOf(int(k.pid))))
	}
	return out
}

// lookup reads one process (kern.proc.pid); false when there is none.
func lookup(pid int) (*unix.KinfoProc, bool) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || k == nil || int(k.Proc.P_pid) != pid {
		return nil, false
	}
	return k, true
}

// signalIf sends sigs to target if it is still the process meant: the
// same pid with the same start time, alive, and still saying ok of
// itself. macOS has no pidfd, so a window remains between this check and
// the kill; the start time shrinks it to a pid freed and handed out again
// within that instant (macOS hands pids out in increasing order).
func signalIf(target proc, ok func(proc) bool, sigs ...syscall.Signal) {
	k, found := lookup(target.pid)
	if !found {
		return
	}
	p := kinfoOf(k).proc(sessionOf(target.pid))
	if p.start != target.start || p.dead || !ok(p) {
		return
	}
	for _, s := range sigs {
		syscall.Kill(target.pid, s)
	}
}
