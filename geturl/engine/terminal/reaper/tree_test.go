package reaper

import (
	"slices"
	"testing"
)

// row is one process of a constructed listing, in the terms both data
// sources give: /proc/PID/stat on Linux, kinfo_proc plus getsid on macOS.
type row struct {
	pid, ppid, pgrp, sid int
	zombie               bool
}

// listing is the world the tests below pick from: a reaper (100, leading
// session 100), its shell (101, leading group 101), the shell's job (102)
// and its child (103), a zombie (104), a daemon that called setsid while
// its parent lives (105), a background job orphaned to init or launchd
// but still in the session (106), someone else's process (200) and the
// kernel's (0 and 1, 0 its own parent on macOS).
var listing = []row{
	{0, 0, 0, 0, false},
	{1, 0, 1, 1, false},
	{100, 1, 100, 100, false},
	{101, 100, 101, 100, false},
	{102, 101, 101, 100, false},
	{103, 102, 101, 100, false},
	{104, 101, 101, 100, true},
	{105, 101, 105, 105, false},
	{106, 1, 106, 100, false},
	{200, 1, 200, 200, false},
}

// fromKinfo builds the listing as the darwin build reads it.
func fromKinfo(rows []row) []proc {
	var out []proc
	for i, r := range rows {
		k := kinfo{pid: int32(r.pid), ppid: int32(r.ppid), pgid: int32(r.pgrp), stat: 2, startSec: 1700000000 + int64(i), startUsec: 7}
		if r.zombie {
			k.stat = sZomb
		}
		out = append(out, k.proc(r.sid))
	}
	return out
}

// sources are the ways a listing reaches the picking logic; the linux
// build adds /proc's stat lines.
func sources() map[string]func([]row) []proc {
	s := map[string]func([]row) []proc{"kinfo": fromKinfo}
	addSources(s)
	return s
}

func pids(ps []proc) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.pid)
	}
	return out
}

// TestTargets: ending a tree reaches every live descendant, parents
// first, including what left the group or session while its parent lives,
// and nothing orphaned away (that is the session's business) or anyone
// else's; ending a session reaches every live member but the leader,
// orphans included, and not what called setsid. Zombies are never
// signalled. Each process is re-checked when signalled: one that has since
// been orphaned out of the tree, or left the session, or is the leader, is
// spared.
func TestTargets(t *testing.T) {
	for name, from := range sources() {
		t.Run(name, func(t *testing.T) {
			procs := from(listing)
			tree, inTree := treeTargets(procs, 100)
			if got, want := pids(tree), []int{101, 102, 105, 103}; !slices.Equal(got, want) {
				t.Errorf("tree: %v, want %v", got, want)
			}
			sess, inSession := sessionTargets(procs, 100)
			if got, want := pids(sess), []int{101, 102, 103, 106}; !slices.Equal(got, want) {
				t.Errorf("session: %v, want %v", got, want)
			}
			for _, tc := range []struct {
				p             proc
				tree, session bool
			}{
				{proc{pid: 102, ppid: 101, session: 100}, true, true},
				{proc{pid: 103, ppid: 1, session: 100}, false, true},    // orphaned since
				{proc{pid: 105, ppid: 101, session: 105}, true, false},  // left the session
				{proc{pid: 100, ppid: 1, session: 100}, false, false},   // the leader
				{proc{pid: 300, ppid: 200, session: 200}, false, false}, // a reused pid
			} {
				if inTree(tc.p) != tc.tree || inSession(tc.p) != tc.session {
					t.Errorf("%+v: tree %v session %v", tc.p, inTree(tc.p), inSession(tc.p))
				}
			}
			if got, _ := treeTargets(procs, 200); len(got) != 0 {
				t.Errorf("a childless root: %v", pids(got))
			}
			if got, _ := treeTargets(procs, 0); len(got) == 0 {
				t.Error("pid 0, its own parent: nothing below it")
			}
		})
	}
}

// TestKinfo: the fields read from a kinfo_proc land where the picking
// logic looks, a zombie is dead, and the start time tells two processes
// with one pid apart.
func TestKinfo(t *testing.T) {
	k := kinfo{pid: 7, ppid: 3, pgid: 5, stat: 3, startSec: 1700000000, startUsec: 250}
	p := k.proc(4)
	if p.pid != 7 || p.ppid != 3 || p.pgrp != 5 || p.session != 4 || p.dead || p.start != 1700000000000250 {
		t.Fatalf("%+v", p)
	}
	k.stat = sZomb
	if !k.proc(4).dead {
		t.Fatal("a zombie is alive")
	}
	later := k
	later.startUsec++
	if later.proc(4).start == p.start {
		t.Fatal("a later process with the same pid looks the same")
	}
}
