// Package proctest answers what tests of process supervision ask: is this
// pid still running, and waiting (boundedly) until it is not.
package proctest

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Alive reports whether pid is a live process. A zombie is not: in a
// container whose init never reaps, orphans stay zombies, and a zombie
// runs nothing.
func Alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

// WaitDead fails the test if pid is still alive after within.
func WaitDead(t testing.TB, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for Alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still alive", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Detach is shell that starts a process in its own session whose parent
// exits at once (a daemon's double fork), so that only a subreaper still
// ties it to the command; it writes that process's pid to detached.pid in
// the working directory and waits until it has.
const Detach = `(setsid sh -c 'echo $$ > detached.pid; exec sleep 100' >/dev/null 2>&1 &)
	while [ ! -s detached.pid ]; do sleep 0.01; done
`

// NeedSetsid skips a test that uses Detach where setsid(1) is missing.
func NeedSetsid(t testing.TB) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
}
