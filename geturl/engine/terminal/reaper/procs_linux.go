package reaper

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is what /proc/PID/stat says of a process that matters here.
type proc struct {
	pid, ppid, pgrp, session int
	dead                     bool // a zombie: it runs nothing
}

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

// below lists the processes under root, parents before children.
func below(procs []proc, root int) (order []proc, has map[int]bool) {
	kids := map[int][]proc{}
	for _, p := range procs {
		kids[p.ppid] = append(kids[p.ppid], p)
	}
	has = map[int]bool{}
	queue := []int{root}
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		for _, c := range kids[parent] {
			if !has[c.pid] {
				has[c.pid] = true
				order = append(order, c)
				queue = append(queue, c.pid)
			}
		}
	}
	return order, has
}

// signalIf sends sigs to pid if it is still the process meant (still says
// ok of itself). It opens a pidfd first and reads the process's stat after,
// so a pid freed and given to someone else since the listing is never
// signalled: the pidfd still names the old process, and signalling a dead
// one fails.
func signalIf(pid int, ok func(proc) bool, sigs ...syscall.Signal) {
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

// signalTree signals every live process below root and returns how many
// there were.
func signalTree(root int, sigs ...syscall.Signal) (live int) {
	order, has := below(scan(), root)
	for _, p := range order {
		if !p.dead {
			live++
			signalIf(p.pid, func(q proc) bool { return q.ppid == root || has[q.ppid] }, sigs...)
		}
	}
	return live
}

// signalSession signals every live process of session sid but its leader
// and returns how many there were.
func signalSession(sid int, sigs ...syscall.Signal) (live int) {
	for _, p := range scan() {
		if p.session == sid && p.pid != sid && !p.dead {
			live++
			signalIf(p.pid, func(q proc) bool { return q.session == sid }, sigs...)
		}
	}
	return live
}

// EndTree SIGKILLs every process below root until none is alive, or bound
// has passed: the hub's way to end a command whose reaper (root) stopped
// answering. A stopped reaper still adopts the orphans of the processes
// killed, so each round finds what the last one left.
func EndTree(root int, bound time.Duration) {
	untilNone(bound, func() int { return signalTree(root, syscall.SIGKILL) })
}

// EndSession SIGKILLs every process of session sid but its leader until
// none is alive, or bound has passed: what a reaper that died (sid is its
// pid) leaves behind, reparented to init. The caller must hold the leader
// unreaped, so the session id names no one else's session.
func EndSession(sid int, bound time.Duration) {
	untilNone(bound, func() int { return signalSession(sid, syscall.SIGKILL) })
}

func untilNone(bound time.Duration, round func() (live int)) {
	deadline := time.Now().Add(bound)
	for pause := time.Millisecond; round() > 0 && time.Now().Before(deadline); pause = min(2*pause, 20*time.Millisecond) {
		time.Sleep(pause)
	}
}
