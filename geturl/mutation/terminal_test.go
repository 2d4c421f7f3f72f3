//go:build unix

package mutation_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/engine/terminal"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/internal/treetest"
	"github.com/hubdev/hub/geturl/mutation"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

func newTermEnv(t *testing.T, cfg terminal.Config, tree map[string]string) *env {
	t.Helper()
	e := newEnvWith(t, rw, mutation.Options{Terminal: &cfg}, tree)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := e.host.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return e
}

// settle follows a's poll URL until the intent has finished.
func (e *env) settle(a answer) answer {
	e.t.Helper()
	for i := 0; i < 120 && (a.State == "pending" || a.State == "running"); i++ {
		a = e.do(a.Poll)
	}
	return a
}

type termResult struct {
	ExitCode          int
	TimedOut          bool
	Output            string
	OutputTruncated   bool
	Cwd               string
	Pid               int
	Running           bool
	DetectedUrls      []string
	DetectedPorts     []int
	StartupTranscript string
}

func result(t *testing.T, a answer) termResult {
	t.Helper()
	if a.State != "succeeded" {
		t.Fatalf("not succeeded: %s", a.raw)
	}
	var r termResult
	if err := json.Unmarshal(a.Result, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// A terminal command runs once however often its URL arrives; after the
// project changed, the replay offers a repeat URL with a server-made run=
// that runs it once more (and is itself replay-safe).
func TestTerminalReplayAndRepeat(t *testing.T) {
	e := newTermEnv(t, terminal.Config{}, map[string]string{"other.txt": "a\n"})
	u := e.m + "/x?wait=1500&raw=echo+run+%3E%3E+runs.txt;+echo+hi"
	r := result(t, e.settle(e.ok(u)))
	if r.ExitCode != 0 || r.Output != "hi\n" || r.Cwd != "/project" {
		t.Fatalf("%+v", r)
	}
	a := e.done(u)
	if !a.Replayed || a.Repeat != "" || e.file("runs.txt") != "run\n" {
		t.Fatalf("replay with nothing changed: %s", a.raw)
	}
	e.done(e.m + "/e?path=other.txt&old=a&new=b&wait=1500")
	a = e.done(u)
	if !a.Replayed || !strings.HasPrefix(a.Repeat, e.m+"/x?wait=1500&run=repeat.") || !strings.HasSuffix(a.Repeat, "&raw=echo+run+%3E%3E+runs.txt;+echo+hi") {
		t.Fatalf("replay after a change: %s", a.raw)
	}
	if b := e.done(u); b.Repeat != a.Repeat {
		t.Fatal("the repeat URL must be stable for one project state")
	}
	rep := e.settle(e.ok(a.Repeat))
	if rep.Replayed || rep.Call == a.Call || e.file("runs.txt") != "run\nrun\n" {
		t.Fatalf("repeat: %s", rep.raw)
	}
	if again := e.done(a.Repeat); !again.Replayed || e.file("runs.txt") != "run\nrun\n" {
		t.Fatalf("repeat fetched twice: %s", again.raw)
	}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// A timeout kills the whole process group the command started — a child
// put in the background included — and nothing else.
func TestTerminalTimeoutKillsProcessTree(t *testing.T) {
	e := newTermEnv(t, terminal.Config{KillGrace: 100 * time.Millisecond}, nil)
	bystander := exec.Command("sleep", "300")
	if err := bystander.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { bystander.Process.Kill(); bystander.Wait() }()

	a := e.settle(e.ok(e.m + "/x?timeout=1&wait=1500&raw=" + transport.Encode("sleep 300 & echo $! > child.pid; sleep 300")))
	r := result(t, a)
	if !r.TimedOut {
		t.Fatalf("%s", a.raw)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(e.file("child.pid")))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; alive(pid) && i < 300; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid) {
		t.Fatalf("the background child %d of a timed-out command survived", pid)
	}
	if !alive(bystander.Process.Pid) {
		t.Fatal("a process the terminal did not start was killed")
	}
	e.fail(e.m+"/x?timeout=601&raw=true", transport.CodeValueOutOfRange)
	e.fail(e.m+"/x?bg=1&timeout=5&raw=true", transport.CodeConflictingParams)
}

// Secret-looking variables never reach a child: by name (tokens, keys,
// passwords, AWS_*) or by value (credentials in a URL, token prefixes).
func TestTerminalSecretStripping(t *testing.T) {
	e := newTermEnv(t, terminal.Config{Env: []string{
		"PATH=" + os.Getenv("PATH"), "HARMLESS=visible", "GITHUB_TOKEN=ghp_0123456789", "OPENAI_API_KEY=sk-x1",
		"MY_SECRET=s3cr3t", "PGPASSWORD=pw1", "AWS_REGION=eu-west-1", "DATABASE_URL=postgres://u:pw2@db/app",
		"INNOCENT_LOOKING=ghp_abcdef", "GETMCP_OPENCODE_BOOTSTRAP_PASSWORD=boot",
	}}, nil)
	r := result(t, e.settle(e.ok(e.m+"/x?wait=1500&raw=env")))
	if !strings.Contains(r.Output, "HARMLESS=visible") {
		t.Fatalf("%q", r.Output)
	}
	for _, s := range []string{"ghp_", "sk-x1", "s3cr3t", "pw1", "eu-west-1", "pw2", "boot"} {
		if strings.Contains(r.Output, s) {
			t.Errorf("%s reached the child:\n%s", s, r.Output)
		}
	}
}

// Output is bounded (head and tail kept), and machine-level catastrophes
// are refused before anything runs.
func TestTerminalBoundsAndRefusals(t *testing.T) {
	e := newTermEnv(t, terminal.Config{MaxOutput: 2048}, map[string]string{"sub/keep.txt": "k"})
	r := result(t, e.settle(e.ok(e.m+"/x?wait=1500&raw="+transport.Encode(`head -c 100000 /dev/zero | tr '\0' x; echo END`))))
	if !r.OutputTruncated || len(r.Output) > 2048+200 || !strings.HasSuffix(r.Output, "END\n") {
		t.Fatalf("truncated=%v len=%d", r.OutputTruncated, len(r.Output))
	}
	before := treetest.Snapshot(t, e.root)
	a := e.settle(e.do(e.m + "/x?wait=1500&raw=rm+-rf+/"))
	if a.ErrorCode != terminal.CodeCatastrophic || a.Retry != "" || !strings.Contains(a.raw, `"rule":"rm_root"`) {
		t.Fatalf("%s", a.raw)
	}
	treetest.Same(t, "after a refused command", before, treetest.Snapshot(t, e.root))
	// cwd: inside the project only; the answer names it /project/...
	if r := result(t, e.settle(e.ok(e.m+"/x?cwd=sub&wait=1500&raw=pwd;ls"))); r.Cwd != "/project/sub" || r.Output != "/project/sub\nkeep.txt\n" {
		t.Fatalf("%+v", r)
	}
	writeTree(t, e.root, map[string]string{"out": "->" + e.outside})
	e.fail(e.m+"/x?cwd=../&raw=pwd", "path_traversal")
	e.fail(e.m+"/x?cwd=out&raw=pwd", "symlink_escape")
	e.fail(e.m+"/x?cwd="+e.outside+"&raw=pwd", "path_outside_scope")
}

// The foreground gate is machine-wide: with both slots taken (by other
// sessions' commands), a command queues — its intent pending, with a poll
// URL — and runs once a slot frees.
func TestTerminalMachineWideGate(t *testing.T) {
	e := newTermEnv(t, terminal.Config{}, nil)
	gate := e.host.TerminalManager().Gate()
	var releases []func()
	for range 2 {
		rel, err := gate.Acquire(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, rel)
	}
	a := e.ok(e.m + "/x?raw=echo+queued")
	if a.State != "pending" || a.Poll == "" {
		t.Fatalf("%s", a.raw)
	}
	releases[0]()
	if r := result(t, e.settle(e.do(a.Poll))); r.Output != "queued\n" {
		t.Fatalf("%+v", r)
	}
	releases[1]()
}

// bg=1 launches detached, reports the startup transcript with detected
// loopback URLs and ports, and is killed when the bridge shuts down. A
// launch that dies during startup fails, with the foreground form of the
// same request as its repair.
func TestTerminalBackground(t *testing.T) {
	e := newTermEnv(t, terminal.Config{StartupSettle: 50 * time.Millisecond}, nil)
	a := e.settle(e.ok(e.m + "/x?bg=1&wait=1500&raw=" + transport.Encode("echo '  VITE ready'; echo '  Local:   http://localhost:5173/'; exec sleep 300")))
	r := result(t, a)
	if !r.Running || r.Pid == 0 || strings.Join(r.DetectedUrls, ",") != "http://localhost:5173/" || len(r.DetectedPorts) != 1 || r.DetectedPorts[0] != 5173 {
		t.Fatalf("%s", a.raw)
	}
	if !alive(r.Pid) {
		t.Fatal("the background process is not running")
	}

	f := e.settle(e.do(e.m + "/x?bg=1&wait=1500&raw=echo+boom;+exit+3"))
	if f.ErrorCode != terminal.CodeBackgroundStartFailed || f.AgentAction != fault.ActionRunForeground || f.Repair != e.m+"/x?wait=1500&raw=echo+boom;+exit+3" || !strings.Contains(f.raw, `"startupTranscript":"boom\n"`) {
		t.Fatalf("%s", f.raw)
	}
	if fr := result(t, e.settle(e.ok(f.Repair))); fr.ExitCode != 3 || fr.Output != "boom\n" {
		t.Fatalf("%+v", fr)
	}
	// Launched under an explicit call= id, the foreground form leaves it
	// out: that id names the failed launch, so keeping it is call_conflict.
	f = e.settle(e.do(e.m + "/x?bg=1&call=launch.1&wait=1500&raw=echo+bang;+exit+4"))
	if f.ErrorCode != terminal.CodeBackgroundStartFailed || f.Repair != e.m+"/x?wait=1500&raw=echo+bang;+exit+4" {
		t.Fatalf("%s", f.raw)
	}
	if fr := result(t, e.settle(e.ok(f.Repair))); fr.ExitCode != 4 || fr.Output != "bang\n" {
		t.Fatalf("%+v", fr)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.host.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; alive(r.Pid) && i < 300; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(r.Pid) {
		t.Fatal("a background process outlived the bridge's shutdown")
	}
	// A later /x gets a new terminal.
	if r := result(t, e.settle(e.ok(e.m+"/x?wait=1500&raw=echo+again"))); r.Output != "again\n" {
		t.Fatal(r)
	}
}

// A write-only session's /x, and a terminal without an engine, refuse.
func TestTerminalUnavailable(t *testing.T) {
	e := newEnv(t, route.Permissions{Terminal: true}, nil)
	e.fail(e.m+"/x?raw=true", mutation.CodeTerminalUnavailable)
	_ = filepath.Join
}

// A command can come from a staged blob (a long script), and a session
// generation's end stops the background processes it launched.
func TestTerminalStagedCommandAndGenerationEnd(t *testing.T) {
	e := newTermEnv(t, terminal.Config{StartupWindow: 200 * time.Millisecond}, nil)
	e.ok(e.m + "/s?blob=script&i=0&count=2&raw=" + transport.Encode("for i in 1 2 3; do\n"))
	e.ok(e.m + "/s?blob=script&i=1&count=2&raw=" + transport.Encode("  echo line $i\ndone\n"))
	if r := result(t, e.settle(e.ok(e.m+"/x?blob=script&count=2&wait=1500"))); r.Output != "line 1\nline 2\nline 3\n" {
		t.Fatalf("%+v", r)
	}
	r := result(t, e.settle(e.ok(e.m+"/x?bg=1&wait=1500&raw=exec+sleep+300")))
	if !r.Running || !alive(r.Pid) {
		t.Fatalf("%+v", r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.sess.state.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; alive(r.Pid) && i < 300; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(r.Pid) {
		t.Fatal("a background process outlived its session generation")
	}
}

// bg=1 with timeout= is refused while binding, so no repair URL (a typo
// of timeout fixed, a timeout clamped) leads to that refusal, and nothing
// runs.
func TestTerminalBackgroundTimeoutHasNoDeadEndRepair(t *testing.T) {
	e := newTermEnv(t, terminal.Config{}, nil)
	for _, u := range []string{"/x?bg=1&timout=5&raw=touch+ran", "/x?bg=1&timeout=5000&raw=touch+ran", "/x?raw=touch+ran&bg=1&timeout=5"} {
		a := e.do(e.m + u)
		if a.OK {
			t.Fatalf("%s: accepted: %s", u, a.raw)
		}
		if a.Repair != "" {
			t.Fatalf("%s: repair %s, which answers %s", u, a.Repair, e.do(a.Repair).raw)
		}
	}
	e.fail(e.m+"/x?bg=1&timeout=5&raw=touch+ran", transport.CodeConflictingParams)
	if !e.missing("ran") {
		t.Fatal("a refused command ran")
	}
}
