package reaper

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// readStat reads /proc/PID/stat.
func readStat(pid int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	return parseStat(pid, b)
}

// parseStat parses a stat line: "pid (comm) state ppid pgrp session ...",
// where comm is whatever name the process gave itself (spaces,
// parentheses, newlines), so fields count from the last ')'.
func parseStat(pid int, b []byte) (proc, bool) {
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return proc{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 4 {
		return proc{}, false
	}
	p := proc{pid: pid, dead: f[0] == "Z" || f[0] == "X"}
	var e1, e2, e3 error
	p.ppid, e1 = strconv.Atoi(f[1])
	p.pgrp, e2 = strconv.Atoi(f[2])
	p.session, e3 = strconv.Atoi(f[3])
	return p, e1 == nil && e2 == nil && e3 == nil
}

// scan reads every process in one pass over /proc.
func scan() []proc {
	ents, _ := os.ReadDir("/proc")
	out := make([]proc, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if p, ok := readStat(pid); ok {
				out = append(out, p)
			}
		}
	}
	return out
}

// signalIf sends sigs to target if it is still the process meant (still
// says ok of itself). It opens a pidfd first and reads the process's stat after,
// so a pid freed and given to someone else since the listing is never
// signalled: the pidfd still names the old process, and signalling a dead
// one fails.
func signalIf(target proc, ok func(proc) bool, sigs ...syscall.Signal) {
	pid := target.pid
	fd, _, errno := syscall.RawSyscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if errno == syscall.ENOSYS { // before Linux 5.3: a small window remains
		if p, found := readStat(pid); found && ok(p) {
			for _, s := range sigs {
				syscall.Kill(pid, s)
			}
		}
		return
	}
	if errno != 0 {
		return
	}
	defer syscall.Close(int(fd))
	if p, found := readStat(pid); found && ok(p) {
		for _, s := range sigs {
			syscall.RawSyscall6(sysPidfdSendSignal, fd, uintptr(s), 0, 0, 0, 0)
		}
	}
}
