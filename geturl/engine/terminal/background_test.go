//go:build linux

package terminal

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/fault"
)

// A Vite-like dev server: coloured startup lines, then it serves (sleeps).
const fakeVite = `printf '\n  \033[32m\033[1mVITE\033[22m v5.4.2\033[39m  ready in 312 ms\n\n'
printf '  \033[32m➜\033[39m  \033[1mLocal\033[22m:   \033[36mhttp://localhost:\033[1m5173\033[22m/\033[39m\n'
printf '  \033[32m➜\033[39m  \033[1mNetwork\033[22m: use --host to expose\n'
exec sleep 100`

func TestLaunchDetectsDevServer(t *testing.T) {
	f := newFixture(t, Config{})
	l := f.launch(Request{Command: fakeVite, Cwd: "src"})
	if !l.Running || l.Failed || l.ExitCode != nil || l.Pid <= 0 || l.Cwd != "/project/src" || l.Err() != nil {
		t.Fatalf("%+v", l)
	}
	if !slices.Equal(l.DetectedURLs, []string{"http://localhost:5173/"}) || !slices.Equal(l.DetectedPorts, []int{5173}) {
		t.Fatalf("detected %q %v", l.DetectedURLs, l.DetectedPorts)
	}
	if !strings.Contains(l.StartupTranscript, "Local:   http://localhost:5173/") || strings.Contains(l.StartupTranscript, "\x1b") {
		t.Fatalf("transcript %q", l.StartupTranscript)
	}
	if !alive(l.Pid) {
		t.Fatal("not running")
	}
	list := f.r.Background()
	if len(list) != 1 || list[0].Pid != l.Pid || list[0].Command != fakeVite || list[0].Cwd != "/project/src" {
		t.Fatalf("%+v", list)
	}
	if err := f.r.Stop(context.Background(), l.Pid); err != nil {
		t.Fatal(err)
	}
	waitDead(t, l.Pid)
	if len(f.r.Background()) != 0 {
		t.Fatal("still tracked")
	}
}

// TestLaunchDiesDuringStartup: a launch that fails is reported as failed
// with its transcript, and offers the foreground form as the repair.
func TestLaunchDiesDuringStartup(t *testing.T) {
	f := newFixture(t, Config{})
	cmd := `echo "> app@1.0.0 dev"; echo "Error: Cannot find module 'vite'" >&2; exit 1`
	l := f.launch(Request{Command: cmd, Cwd: "/project/src"})
	if l.Running || !l.Failed || l.ExitCode == nil || *l.ExitCode != 1 {
		t.Fatalf("%+v", l)
	}
	if l.StartupTranscript != "> app@1.0.0 dev\nError: Cannot find module 'vite'\n" {
		t.Fatalf("transcript %q", l.StartupTranscript)
	}
	if l.Repair == nil || l.Repair.Command != cmd || l.Repair.Cwd != "/project/src" {
		t.Fatalf("repair %+v", l.Repair)
	}
	e := l.Err()
	if e == nil || e.Code != CodeBackgroundStartFailed || e.Action != fault.ActionRunForeground || !e.Retryable ||
		e.Repair != l.Repair || !strings.Contains(e.Detail, "status 1") {
		t.Fatalf("%+v", e)
	}
	if len(f.r.Background()) != 0 {
		t.Fatal("a dead launch is still tracked")
	}
}

func TestLaunchKilledBySignal(t *testing.T) {
	f := newFixture(t, Config{})
	l := f.launch(Request{Command: `kill -SEGV $$`})
	if !l.Failed || l.Signal != "SIGSEGV" || l.ExitCode != nil || !strings.Contains(l.Err().Detail, "SIGSEGV") {
		t.Fatalf("%+v", l)
	}
}

func TestLaunchExitsCleanly(t *testing.T) {
	f := newFixture(t, Config{})
	l := f.launch(Request{Command: `echo one-shot`})
	if l.Running || l.Failed || l.ExitCode == nil || *l.ExitCode != 0 || l.StartupTranscript != "one-shot\n" || l.Repair != nil {
		t.Fatalf("%+v", l)
	}
}

// TestLaunchWindowAndDrain: a quiet process is reported running when the
// window closes (the clock is driven by hand), and its output keeps being
// read afterwards, so writing megabytes never blocks it.
func TestLaunchWindowAndDrain(t *testing.T) {
	clk := newFakeClock()
	f := newFixture(t, Config{Clock: clk, MaxTranscript: 4096})
	job, err := f.r.Launch(context.Background(), Request{Command: `
		while [ ! -f go ]; do sleep 0.01; done
		head -c 3000000 /dev/zero | tr '\0' x
		echo > drained
		exec sleep 100`})
	if err != nil {
		t.Fatal(err)
	}
	clk.waitPending(t, 1)
	clk.Advance(Defaults.StartupWindow)
	l, err := job.Wait(context.Background())
	if err != nil || !l.Running || l.StartupTranscript != "" || l.TranscriptBytes != 0 || l.StartupMs != 5000 {
		t.Fatalf("%v %+v", err, l)
	}
	os.WriteFile(f.path("go"), nil, 0o644)
	f.waitFile("drained")
	deadline := time.Now().Add(generous)
	for {
		list := f.r.Background()
		if len(list) != 1 {
			t.Fatalf("%d processes", len(list))
		}
		if list[0].OutputBytes == 3000000 {
			if list[0].OmittedBytes == 0 || len(list[0].Output) > 4096+64 {
				t.Fatalf("output %d bytes, %d omitted", len(list[0].Output), list[0].OmittedBytes)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("read %d of 3000000 bytes", list[0].OutputBytes)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestLaunchShutdownKillsTree: at shutdown every background process group
// goes, children included.
func TestLaunchShutdownKillsTree(t *testing.T) {
	f := newFixture(t, Config{KillGrace: 200 * time.Millisecond})
	l1 := f.launch(Request{Command: `sh -c 'trap "" TERM; echo $$ > child.pid; exec sleep 100' & echo "listening on :8080"; exec sleep 100`})
	l2 := launchOn(t, f.m.Runner(f.scope), Request{Command: `echo "port 9000"; exec sleep 100`})
	child := f.waitPidFile("child.pid")
	if !l1.Running || !l2.Running || !slices.Equal(l1.DetectedPorts, []int{8080}) || !slices.Equal(l2.DetectedPorts, []int{9000}) {
		t.Fatalf("%+v %+v", l1, l2)
	}
	if err := f.m.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{l1.Pid, l2.Pid, child} {
		waitDead(t, pid)
	}
}

// TestLaunchLeaderExitEndsGroup: when a background shell exits on its own,
// what it left in its group is ended too.
func TestLaunchLeaderExitEndsGroup(t *testing.T) {
	f := newFixture(t, Config{KillGrace: 100 * time.Millisecond})
	l := f.launch(Request{Command: `sleep 100 & echo $! > child.pid; echo "port 3000"; while [ ! -f quit ]; do sleep 0.01; done`})
	child := f.waitPidFile("child.pid")
	if !l.Running || !alive(child) {
		t.Fatalf("%+v", l)
	}
	os.WriteFile(f.path("quit"), nil, 0o644)
	waitDead(t, l.Pid)
	waitDead(t, child)
}

func TestLaunchLimits(t *testing.T) {
	f := newFixture(t, Config{MaxBackground: 1, MaxBackgroundTotal: 2})
	a := f.launch(Request{Command: `echo "port 4001"; exec sleep 100`})
	_, err := f.r.Launch(context.Background(), Request{Command: "exec sleep 100"})
	var te *Error
	if !errors.As(err, &te) || te.Code != CodeBackgroundLimit || !te.Retryable {
		t.Fatalf("per session: %v", err)
	}
	other := f.m.Runner(f.scope)
	ol := launchOn(t, other, Request{Command: `echo "port 4002"; exec sleep 100`})
	third := f.m.Runner(f.scope)
	if _, err := third.Launch(context.Background(), Request{Command: "exec sleep 100"}); !errors.As(err, &te) || te.Code != CodeBackgroundLimit {
		t.Fatalf("in all: %v", err)
	}
	if err := f.r.Stop(context.Background(), ol.Pid); !errors.As(err, &te) || te.Code != CodeUnknownProcess {
		t.Fatalf("stopping another session's process: %v", err)
	}
	if !alive(ol.Pid) {
		t.Fatal("another session's process was stopped")
	}
	if err := f.r.Stop(context.Background(), a.Pid); err != nil {
		t.Fatal(err)
	}
	b := f.launch(Request{Command: `echo "port 4003"; exec sleep 100`})
	if !b.Running {
		t.Fatalf("%+v", b)
	}
	if err := other.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitDead(t, ol.Pid)
	if len(other.Background()) != 0 || len(f.r.Background()) != 1 {
		t.Fatal("Close stopped the wrong processes")
	}
}

func launchOn(t *testing.T, r *Runner, req Request) *Launched {
	t.Helper()
	job, err := r.Launch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	l, err := job.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLaunchCanceledDuringStartup(t *testing.T) {
	f := newFixture(t, Config{})
	job, err := f.r.Launch(context.Background(), Request{Command: `echo $$ > pid; exec sleep 100`})
	if err != nil {
		t.Fatal(err)
	}
	pid := f.waitPidFile("pid")
	job.Cancel()
	_, err = job.Wait(context.Background())
	var te *Error
	if !errors.As(err, &te) || te.Code != CodeCanceled {
		t.Fatalf("%v", err)
	}
	waitDead(t, pid)
	if len(f.r.Background()) != 0 {
		t.Fatal("still tracked")
	}
}

func TestLaunchedJSON(t *testing.T) {
	f := newFixture(t, Config{})
	b, _ := json.Marshal(f.launch(Request{Command: "echo quiet"}))
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, k := range []string{"cwd", "pid", "running", "startupMs", "startupTranscript", "detectedUrls", "detectedPorts", "exitCode"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %s in %s", k, b)
		}
	}
	if !strings.Contains(string(b), `"detectedUrls":[]`) || !strings.Contains(string(b), `"detectedPorts":[]`) {
		t.Errorf("empty detections are not []: %s", b)
	}
	if strings.Contains(string(b), f.root) {
		t.Errorf("host path in %s", b)
	}
}
