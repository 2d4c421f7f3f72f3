package adaptertest

import (
	"os"
	"testing"
	"time"
)

// WaitTimeout bounds WaitFor: generous, because a loaded CI machine under
// -race is slow, and a passing test never waits for it.
const WaitTimeout = 10 * time.Second

// WaitFor polls cond until it holds, failing the test after WaitTimeout with
// what it was waiting for. Server state often changes on another goroutine
// after a socket event; real sockets cannot run inside a synctest bubble,
// so polling is the honest way to wait for it.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// FileMode returns path's permission bits, failing the test if it cannot.
func FileMode(t testing.TB, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}
