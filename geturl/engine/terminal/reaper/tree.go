package reaper

// proc is what a process listing (/proc on Linux, sysctl kern.proc on
// macOS) says of a process that matters here.
type proc struct {
	pid, ppid, pgrp, session int
	dead                     bool // a zombie: it runs nothing
	// start tells the process from a later one given the same pid where
	// the OS has no pidfd (macOS: its start time in microseconds); 0 when
	// unknown.
	start int64
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

// treeTargets picks what ending the tree under root signals: every live
// process below it, parents first, and the test each must still pass when
// it is signalled (its parent still in the tree).
func treeTargets(procs []proc, root int) ([]proc, func(proc) bool) {
	order, has := below(procs, root)
	var live []proc
	for _, p := range order {
		if !p.dead {
			live = append(live, p)
		}
	}
	return live, func(q proc) bool { return q.ppid == root || has[q.ppid] }
}

// sessionTargets picks what ending session sid signals: every live member
// but its leader, and the test each must still pass (still a member).
func sessionTargets(procs []proc, sid int) ([]proc, func(proc) bool) {
	var live []proc
	for _, p := range procs {
		if p.session == sid && p.pid != sid && !p.dead {
			live = append(live, p)
		}
	}
	return live, func(q proc) bool { return q.session == sid && q.pid != sid }
}

// kinfo is the part of macOS's struct kinfo_proc the reaper reads
// (sysctl kern.proc), copied out of unix.KinfoProc by the darwin build so
// that the conversion is tested on every OS.
type kinfo struct {
	pid, ppid, pgid int32
	stat            int8  // p_stat: sZomb for a zombie
	startSec        int64 // p_starttime
	startUsec       int32
}

// sZomb is macOS's p_stat of a zombie (sys/proc.h).
const sZomb = 5

// proc converts a kinfo; sid is the process's session (getsid), which
// kinfo_proc gives only as a kernel address.
func (k kinfo) proc(sid int) proc {
	return proc{
		pid: int(k.pid), ppid: int(k.ppid), pgrp: int(k.pgid), session: sid,
		dead:  k.stat == sZomb,
		start: k.startSec*1_000_000 + int64(k.startUsec),
	}
}
