//go:build linux || darwin

package reaper

import (
	"syscall"
	"time"
)

// signalTree signals every live process below root and returns how many
// there were.
func signalTree(root int, sigs ...syscall.Signal) (live int) {
	targets, ok := treeTargets(scan(), root)
	for _, p := range targets {
		signalIf(p, ok, sigs...)
	}
	return len(targets)
}

// signalSession signals every live process of session sid but its leader
// and returns how many there were.
func signalSession(sid int, sigs ...syscall.Signal) (live int) {
	targets, ok := sessionTargets(scan(), sid)
	for _, p := range targets {
		signalIf(p, ok, sigs...)
	}
	return len(targets)
}

// EndTree SIGKILLs every process below root until none is alive, or bound
// has passed: the hub's way to end a command whose reaper (root) stopped
// answering. A stopped reaper still adopts the orphans of the processes
// killed (on Linux, where it is a subreaper), so each round finds what the
// last one left.
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
