package terminal

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

// An OS without the terminal says so by name to the agent, not as a
// shell that "could not start".
func TestSpawnErrorNamesTheOS(t *testing.T) {
	e := spawnError(&UnsupportedError{GOOS: "windows"})
	if e.Code != CodeSpawnFailed || e.Retryable || !strings.Contains(e.Detail, "not available on windows") {
		t.Fatalf("%+v", e)
	}
	e = spawnError(&errWrap{syscall.ENOENT})
	if e.Detail != "could not start the shell: "+syscall.ENOENT.Error() {
		t.Fatalf("an errno: %+v", e)
	}
	if err := Supported(); err != nil {
		var u *UnsupportedError
		if !errors.As(err, &u) {
			t.Fatalf("Supported: %v is no UnsupportedError", err)
		}
	}
}

type errWrap struct{ err error }

func (e *errWrap) Error() string { return "/host/path: " + e.err.Error() }
func (e *errWrap) Unwrap() error { return e.err }
