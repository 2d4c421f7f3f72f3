package main

import (
	"errors"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hubdev/hub/autostart"
)

// TestAutostartScripts runs `hub autostart` end to end against the XDG
// entry (the kind this OS's tests can run), and then runs what the entry
// says, as a desktop session does at login.
func TestAutostartScripts(t *testing.T) {
	if autostart.Native != autostart.XDG {
		t.Skip("the scripts check an XDG autostart entry")
	}
	p := scriptParams("testdata/autostart")
	logins := &loginProcs{}
	p.Cmds["login"] = logins.login
	p.Cmds["loggedout"] = logins.loggedOut
	testscript.Run(t, p)
}

// loginProcs are the processes `login` started, by script.
type loginProcs struct {
	mu   sync.Mutex
	done map[*testscript.TestScript]chan error
}

// login VAR starts the command the user's XDG autostart entry names, as a
// desktop session does at login (in /, with the session's environment:
// the script's), and stores its pid in $VAR. The script must end it; it
// is killed at the end otherwise.
func (l *loginProcs) login(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: login VAR")
	}
	m, err := autostart.For(autostart.XDG, autostart.Options{Home: ts.Getenv("HOME"), Getenv: ts.Getenv})
	ts.Check(err)
	st, err := m.Status("")
	ts.Check(err)
	if !st.Enabled || st.Argv == nil {
		ts.Fatalf("no readable autostart entry: %+v", st)
	}
	cmd := exec.Command(st.Argv[0], st.Argv[1:]...)
	cmd.Dir = "/"
	for _, k := range []string{"HOME", "PATH", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "NO_COLOR"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	ts.Check(cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	l.mu.Lock()
	if l.done == nil {
		l.done = map[*testscript.TestScript]chan error{}
	}
	l.done[ts] = done
	l.mu.Unlock()
	ts.Defer(func() {
		cmd.Process.Signal(syscall.SIGKILL)
		l.mu.Lock()
		delete(l.done, ts)
		l.mu.Unlock()
	})
	ts.Setenv(args[0], strconv.Itoa(cmd.Process.Pid))
}

// loggedout waits (up to 30 s) for the process `login` started to exit,
// and requires exit status 0.
func (l *loginProcs) loggedOut(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: loggedout")
	}
	l.mu.Lock()
	done := l.done[ts]
	l.mu.Unlock()
	if done == nil {
		ts.Fatalf("no login process")
	}
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ts.Fatalf("the login process exited %d", ee.ExitCode())
		}
		ts.Check(err)
	case <-time.After(30 * time.Second):
		ts.Fatalf("the login process still runs after 30s")
	}
}
