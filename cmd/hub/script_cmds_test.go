package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/supervisor"
)

// scriptCmds are the custom testscript commands every script test shares;
// adapter script tests add their own to the map scriptParams returns.
func scriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"exits":     cmdExits,
		"expand":    cmdExpand,
		"freeport":  cmdFreePort,
		"holdport":  cmdHoldPort,
		"waitport":  cmdWaitPort,
		"killhub":   cmdKillHub,
		"victim":    cmdVictim,
		"alive":     cmdAlive,
		"holdlock":  cmdHoldLock,
		"waitstate": cmdWaitState,
		"sighub":    cmdSigHub,
		"maxsize":   cmdMaxSize,
	}
}

// exits CODE PROG ARGS... runs PROG and requires that exact exit status.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad code %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("exits: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// expand SRC DST copies SRC to DST replacing $VAR references with the
// script's environment (txtar files are not expanded by themselves).
func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: expand SRC DST")
	}
	data := ts.ReadFile(args[0])
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(os.Expand(data, ts.Getenv)), 0o600))
}

// holdport VAR binds a free loopback port for the rest of the script, as
// another process would, and stores its number in $VAR.
func cmdHoldPort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: holdport VAR")
	}
	ln, port, err := hub.Listen([]int{0})
	if err != nil {
		ts.Fatalf("holdport: %v", err)
	}
	ts.Defer(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	ts.Setenv(args[0], strconv.Itoa(port))
}

// portFree is the script condition [portfree:N]: true when no other
// process holds loopback port N. Scripts that need a fixed port skip when
// it is taken (for instance by another package's tests running in
// parallel): they would otherwise test that process, not the hub.
func portFree(cond string) (bool, error) {
	arg, ok := strings.CutPrefix(cond, "portfree:")
	if !ok {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	p, err := strconv.Atoi(arg)
	if err != nil {
		return false, fmt.Errorf("portfree: bad port %q", arg)
	}
	ln, _, err := hub.Listen([]int{p})
	if err != nil {
		return false, nil
	}
	ln.Close()
	return true, nil
}

// killhub sends SIGKILL to the hub named in the state file and waits for
// it to die, leaving the state file behind as a real crash would.
func cmdKillHub(ts *testscript.TestScript, neg bool, args []string) {
	dirs := hub.Dirs{State: ts.Getenv("XDG_STATE_HOME") + "/hub"}
	st, err := supervisor.ReadState(dirs.State)
	if err != nil {
		ts.Fatalf("killhub: %v", err)
	}
	if err := signalPID(st.PID, os.Kill); err != nil {
		ts.Fatalf("killhub: %v", err)
	}
	if !waitExit(st.PID, 10e9) {
		ts.Fatalf("killhub: pid %d survived SIGKILL", st.PID)
	}
	ts.Setenv("KILLED_PID", fmt.Sprint(st.PID))
}

// signalPID sends sig to the process pid, which need not be our child
// (os.Process.Signal: on Windows only os.Kill).
func signalPID(pid int, sig os.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	defer p.Release()
	return p.Signal(sig)
}

// freeport VAR stores a currently free loopback port in $VAR.
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport VAR")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	ts.Check(err)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ts.Setenv(args[0], strconv.Itoa(port))
}

// waitport PORT waits (up to 15 s) until something listens on PORT.
func cmdWaitPort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitport PORT")
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.Dial("tcp4", "127.0.0.1:"+args[0])
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("nothing listens on %s", args[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// victim VAR starts an unrelated process (sleep) for the rest of the
// script, as another program of the user's would run, and stores its pid
// in $VAR: a planted state file names it.
func cmdVictim(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: victim VAR")
	}
	cmd := exec.Command("sleep", "600")
	ts.Check(cmd.Start())
	ts.Defer(func() { cmd.Process.Kill(); cmd.Wait() })
	ts.Setenv(args[0], strconv.Itoa(cmd.Process.Pid))
}

// alive PID requires that PID still runs (! alive: that it does not).
func cmdAlive(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: alive PID")
	}
	pid, err := strconv.Atoi(args[0])
	ts.Check(err)
	if hub.PIDAlive(pid) == neg {
		ts.Fatalf("pid %d alive = %v", pid, !neg)
	}
}

// holdlock takes the state dir's hub lock for the rest of the script from
// the test process, which is not the pid a planted state file names.
func cmdHoldLock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: holdlock")
	}
	lock, err := supervisor.AcquireLock(ts.Getenv("XDG_STATE_HOME") + "/hub")
	ts.Check(err)
	ts.Defer(lock.Release)
}

// waitstate waits (up to 15 s) until the state dir holds a readable
// state file, as a running hub keeps it.
func cmdWaitState(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: waitstate")
	}
	dir := ts.Getenv("XDG_STATE_HOME") + "/hub"
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := supervisor.ReadState(dir); err == nil {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("no readable state file in %s after 15s", dir)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sighub SIGNAL sends SIGNAL (QUIT, TERM, …) to the hub named in the state
// file and waits for it to exit.
func cmdSigHub(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sighub SIGNAL")
	}
	sig, ok := scriptSignals[args[0]]
	if !ok || args[0] == "HUP" {
		ts.Fatalf("sighub: unknown signal %q", args[0])
	}
	st, err := supervisor.ReadState(ts.Getenv("XDG_STATE_HOME") + "/hub")
	ts.Check(err)
	ts.Check(signalPID(st.PID, sig))
	if sig == pauseSignal {
		ts.Defer(func() { signalPID(st.PID, resumeSignal) }) // never leave it stopped
		return
	}
	if !waitExit(st.PID, 10e9) {
		ts.Fatalf("sighub: pid %d survived SIG%s", st.PID, args[0])
	}
}

// maxsize N FILE... requires every FILE to be at most N bytes.
func cmdMaxSize(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: maxsize N FILE...")
	}
	n, err := strconv.ParseInt(args[0], 10, 64)
	ts.Check(err)
	for _, f := range args[1:] {
		fi, err := os.Stat(ts.MkAbs(f))
		ts.Check(err)
		if fi.Size() > n {
			ts.Fatalf("%s is %d bytes, over %d", f, fi.Size(), n)
		}
	}
}
