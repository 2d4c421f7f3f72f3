//go:build linux

package terminal

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/internal/proctest"
)

// TestForegroundTimeoutKillsDetached: the spec's "foreground timeout kills
// owned process trees" includes a descendant that moved to its own session.
func TestForegroundTimeoutKillsDetached(t *testing.T) {
	proctest.NeedSetsid(t)
	// The timeout leaves the command time to detach, even on a slow machine.
	f := newFixture(t, Config{Timeout: 2 * time.Second, KillGrace: 100 * time.Millisecond})
	res := f.run(Request{Command: proctest.Detach + `echo detached; sleep 100`})
	if !res.TimedOut || res.Output != "detached\n" {
		t.Fatalf("%+v", res)
	}
	waitDead(t, f.waitPidFile("detached.pid"))
}

// TestForegroundCancelKillsDetached: so does a cancel (a stop or shutdown).
func TestForegroundCancelKillsDetached(t *testing.T) {
	proctest.NeedSetsid(t)
	f := newFixture(t, Config{KillGrace: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	job, err := f.r.Start(ctx, Request{Command: proctest.Detach + `sleep 100`})
	if err != nil {
		t.Fatal(err)
	}
	pid := f.waitPidFile("detached.pid")
	cancel()
	wctx, wcancel := context.WithTimeout(context.Background(), generous)
	defer wcancel()
	if res, err := job.Wait(wctx); err != nil || !res.Canceled {
		t.Fatalf("%+v %v", res, err)
	}
	waitDead(t, pid)
}

// TestForegroundDetachedReleased: a command that ends on its own leaves a
// daemon it deliberately detached (a build server, say) running, while its
// own background jobs go with it (TestForegroundStraysKilled).
func TestForegroundDetachedReleased(t *testing.T) {
	proctest.NeedSetsid(t)
	f := newFixture(t, Config{KillGrace: 100 * time.Millisecond})
	res := f.run(Request{Command: proctest.Detach + `echo bye`})
	pid := f.waitPidFile("detached.pid")
	defer func() { killPid(pid); waitDead(t, pid) }()
	if res.ExitCode != 0 || res.Output != "bye\n" {
		t.Fatalf("%+v", res)
	}
	if !alive(pid) {
		t.Fatal("the detached process was killed")
	}
}

// TestStopKillsDetached: stopping a background process ends what it
// detached as well.
func TestStopKillsDetached(t *testing.T) {
	proctest.NeedSetsid(t)
	f := newFixture(t, Config{KillGrace: 100 * time.Millisecond})
	l := f.launch(Request{Command: proctest.Detach + `echo "listening on :4000"; exec sleep 100`})
	pid := f.waitPidFile("detached.pid")
	if !l.Running || !alive(pid) {
		t.Fatalf("%+v", l)
	}
	ctx, cancel := context.WithTimeout(context.Background(), generous)
	defer cancel()
	if err := f.r.Stop(ctx, l.Pid); err != nil {
		t.Fatal(err)
	}
	waitDead(t, l.Pid)
	waitDead(t, pid)
}

// TestSpawnFailureReported: a shell that cannot be started is a spawn
// error carrying the errno, with no reaper left behind.
func TestSpawnFailureReported(t *testing.T) {
	// Under the test's own directory: /nonexistent is a path other tests
	// on the machine may create.
	dir := t.TempDir()
	_, err := spawn(spawnSpec{shell: dir + "/missing/sh", command: "true", dir: dir, limit: 100},
		wallClock{}, time.Second, time.Second)
	if err != syscall.ENOENT {
		t.Fatalf("%v", err)
	}
}

// TestTimeoutKillsForkingLoop: a command that ignores SIGTERM and keeps
// detaching children as fast as it can is still ended whole at its timeout:
// SIGKILL goes round until nothing is left (the fixture's cleanup fails the
// test if any process carrying its marker survives).
func TestTimeoutKillsForkingLoop(t *testing.T) {
	proctest.NeedSetsid(t)
	f := newFixture(t, Config{Timeout: 500 * time.Millisecond, KillGrace: 200 * time.Millisecond})
	res := f.run(Request{Command: `trap '' TERM
		while :; do (setsid sh -c 'trap "" TERM; exec sleep 100' >/dev/null 2>&1 &); done`})
	if !res.TimedOut || res.Signal != "SIGKILL" {
		t.Fatalf("%+v", res)
	}
}

// TestTimeoutWithStoppedReaper: a command that stops its reaper (SIGSTOP
// cannot be ignored) is still ended at its timeout: the hub kills the tree
// itself when the reaper does not answer.
func TestTimeoutWithStoppedReaper(t *testing.T) {
	f := newFixture(t, Config{Timeout: 2 * time.Second, KillGrace: 100 * time.Millisecond})
	// Stopped before it reported the shell, the reaper is the start-up case
	// (spawn_failed after 10 s, the tree killed).
	res := f.runOnceStarted(`sleep 100 & echo $! > child.pid; kill -STOP $PPID; sleep 100`)
	if !res.TimedOut {
		t.Fatalf("%+v", res)
	}
	waitDead(t, f.waitPidFile("child.pid"))
}

// TestKilledReaperLeavesNothing: a reaper killed outright (SIGKILL cannot
// be ignored) leaves its session to the hub, which ends it.
func TestKilledReaperLeavesNothing(t *testing.T) {
	f := newFixture(t, Config{KillGrace: 100 * time.Millisecond, DrainWait: 100 * time.Millisecond})
	// It kills its reaper once the hub has the shell's pid; before that is
	// TestReaperKilledAtStartLeavesNothing's case.
	res := f.runOnceStarted(`sleep 100 & echo $! > child.pid; kill -KILL $PPID; wait`)
	if res.TimedOut || res.ExitCode != -1 {
		t.Fatalf("%+v", res)
	}
	waitDead(t, f.waitPidFile("child.pid"))
}

// TestReaperIgnoresQuit: SIGQUIT (pkill -QUIT -f hub, for a Go stack dump)
// and SIGABRT do not end the reaper either.
func TestReaperIgnoresQuit(t *testing.T) {
	f := newFixture(t, Config{})
	// The reaper ignores them before it reports the shell.
	res := f.runOnceStarted(`kill -QUIT $PPID; kill -ABRT $PPID; sleep 0.2; kill -0 $PPID && echo alive`)
	if res.ExitCode != 0 || res.Output != "alive\n" {
		t.Fatalf("%+v", res)
	}
}

// TestForegroundJobsInOtherGroupsKilled: a background job that moved to a
// process group of its own without leaving the session (coreutils timeout
// does setpgid) is ended with the shell like any other job.
func TestForegroundJobsInOtherGroupsKilled(t *testing.T) {
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Skip("no timeout(1)")
	}
	f := newFixture(t, Config{KillGrace: 100 * time.Millisecond})
	res := f.run(Request{Command: `timeout 100 sleep 100 >/dev/null 2>&1 & echo $! > job.pid; sleep 0.2; echo hi`})
	if res.ExitCode != 0 || res.Output != "hi\n" {
		t.Fatalf("%+v", res)
	}
	waitDead(t, f.waitPidFile("job.pid"))
}

// TestReaperKilledAtStartLeavesNothing: a command that kills its reaper at
// once, perhaps before it reported the shell, fails or finishes, but
// leaves nothing running (the fixture's cleanup checks).
func TestReaperKilledAtStartLeavesNothing(t *testing.T) {
	f := newFixture(t, Config{KillGrace: 100 * time.Millisecond, DrainWait: 100 * time.Millisecond})
	for range 5 {
		job, err := f.r.Start(context.Background(), Request{Command: `sleep 100 & kill -KILL $PPID; wait`})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), generous)
		_, err = job.Wait(ctx)
		cancel()
		var terr *Error
		if err != nil && (!errors.As(err, &terr) || terr.Code != CodeSpawnFailed) {
			t.Fatal(err)
		}
	}
}

// runOnceStarted runs command in the foreground, letting it go on only once
// the job has started, that is once the hub holds the shell's pid.
func (f *fixture) runOnceStarted(command string) *Result {
	f.t.Helper()
	job, err := f.r.Start(context.Background(), Request{Command: "while [ ! -f go ]; do sleep 0.01; done\n" + command})
	if err != nil {
		f.t.Fatal(err)
	}
	<-job.Started()
	os.WriteFile(f.path("go"), nil, 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), generous)
	defer cancel()
	res, err := job.Wait(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return res
}

// detachThenExit detaches a daemon, waits until it runs in its own session,
// prints a port and exits 0: a background launch of a daemonising server
// (`exec setsid server`, `redis-server --daemonize yes`).
const detachThenExit = proctest.Detach + `while [ ! -s detached.pid ]; do sleep 0.01; done; echo "port 4000"`

// TestLaunchDetachedHeldUntilClose: what a background command detached is
// still that session's background process: it is not left to init when the
// shell exits, and the session's end kills it.
func TestLaunchDetachedHeldUntilClose(t *testing.T) {
	proctest.NeedSetsid(t)
	f := newFixture(t, Config{KillGrace: 100 * time.Millisecond})
	l := f.launch(Request{Command: detachThenExit})
	pid := f.waitPidFile("detached.pid")
	if l.Running || l.Failed || l.ExitCode == nil || *l.ExitCode != 0 {
		t.Fatalf("%+v", l)
	}
	if !alive(pid) {
		t.Fatal("the detached process was killed when the shell exited")
	}
	if n := len(f.r.Background()); n != 1 {
		t.Fatalf("%d background processes tracked, want the held one", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), generous)
	defer cancel()
	if err := f.r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitDead(t, pid)
	if n := len(f.r.Background()); n != 0 {
		t.Fatalf("%d background processes still tracked", n)
	}
}

// TestLaunchDetachedShutdown: an adapter shutdown ends a held daemon too.
func TestLaunchDetachedShutdown(t *testing.T) {
	proctest.NeedSetsid(t)
	f := newFixture(t, Config{KillGrace: 100 * time.Millisecond})
	f.launch(Request{Command: detachThenExit})
	pid := f.waitPidFile("detached.pid")
	ctx, cancel := context.WithTimeout(context.Background(), generous)
	defer cancel()
	if err := f.m.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	waitDead(t, pid)
}

// TestLaunchDetachedExitFrees: a held daemon that ends on its own stops
// counting against the session's background limit.
func TestLaunchDetachedExitFrees(t *testing.T) {
	proctest.NeedSetsid(t)
	f := newFixture(t, Config{KillGrace: 100 * time.Millisecond})
	f.launch(Request{Command: detachThenExit})
	pid := f.waitPidFile("detached.pid")
	killPid(pid)
	deadline := time.Now().Add(generous)
	for len(f.r.Background()) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the exited daemon is still tracked")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
