//go:build linux

package terminal

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hubdev/hub/geturl/fault"
)

func TestForegroundOutputAndExitCode(t *testing.T) {
	f := newFixture(t, Config{})
	res := f.run(Request{Command: `echo out; echo err >&2; exit 3`})
	if res.ExitCode != 3 || res.Signal != "" || res.TimedOut || res.Canceled {
		t.Fatalf("%+v", res)
	}
	if res.Output != "out\nerr\n" || res.OutputBytes != 8 || res.OutputTruncated || res.Cwd != "/project" {
		t.Fatalf("%+v", res)
	}
}

func TestForegroundShellSyntax(t *testing.T) {
	f := newFixture(t, Config{})
	res := f.run(Request{Command: `for i in 1 2 3; do printf "%s," "$i"; done | tr , ' '; echo "a&b|c" && false || echo "$((6*7))"`})
	if res.ExitCode != 0 || res.Output != "1 2 3 a&b|c\n42\n" {
		t.Fatalf("%+v", res)
	}
}

func TestForegroundCwd(t *testing.T) {
	f := newFixture(t, Config{})
	for _, cwd := range []string{"src", "/project/src", "./src/", f.path("src")} {
		res := f.run(Request{Command: `pwd; echo "$PWD"; ls ../file.txt`, Cwd: cwd})
		if res.Cwd != "/project/src" || res.Output != "/project/src\n/project/src\n../file.txt\n" {
			t.Errorf("cwd %q: %+v", cwd, res)
		}
	}
	for _, tc := range []struct{ cwd, code string }{
		{"../", "path_traversal"},
		{"/etc", "path_outside_scope"},
		{"missing", "path_not_found"},
		{"file.txt", CodeNotADirectory},
	} {
		_, err := f.r.Start(context.Background(), Request{Command: "touch ran", Cwd: tc.cwd})
		var te *Error
		if !errors.As(err, &te) || te.Code != tc.code || strings.Contains(te.Error(), f.root) {
			t.Errorf("cwd %q: %v; want %s", tc.cwd, err, tc.code)
		}
	}
	if _, err := os.Stat(f.path("ran")); err == nil {
		t.Fatal("a refused command ran")
	}
}

// TestForegroundRedactsRoot: output naming the project's host path shows
// /project instead, even when the path is split between reads.
func TestForegroundRedactsRoot(t *testing.T) {
	f := newFixture(t, Config{})
	res := f.run(Request{Command: `echo "$(pwd)/x"; printf '%s' "$(pwd)" | fold -w 3; echo; ls -d "$PWD"/src`})
	if strings.Contains(res.Output, f.root) || !strings.HasPrefix(res.Output, "/project/x\n") ||
		!strings.HasSuffix(res.Output, "/project/src\n") {
		t.Fatalf("output %q", res.Output)
	}
}

func TestForegroundStripsANSI(t *testing.T) {
	f := newFixture(t, Config{})
	res := f.run(Request{Command: `printf '\033[31mred\033[0m \033]0;title\007ok\n'`})
	if res.Output != "red ok\n" {
		t.Fatalf("%q", res.Output)
	}
}

func TestForegroundStdinIsDevNull(t *testing.T) {
	f := newFixture(t, Config{})
	res := f.run(Request{Command: `cat; echo "rc=$?"; [ -t 0 ] || echo notty`})
	if res.Output != "rc=0\nnotty\n" {
		t.Fatalf("%q", res.Output)
	}
}

func TestForegroundOutputBounded(t *testing.T) {
	f := newFixture(t, Config{MaxOutput: 64 << 10})
	res := f.run(Request{Command: `echo BEGIN; head -c 300000 /dev/zero | tr '\0' a; echo; echo END`})
	if !res.OutputTruncated || res.OutputBytes != 6+300000+1+4 || res.ExitCode != 0 {
		t.Fatalf("truncated %v bytes %d", res.OutputTruncated, res.OutputBytes)
	}
	if len(res.Output) > 64<<10+64 || !strings.HasPrefix(res.Output, "BEGIN\naaa") || !strings.HasSuffix(res.Output, "aaa\nEND\n") {
		t.Fatalf("len %d head %q tail %q", len(res.Output), res.Output[:10], res.Output[len(res.Output)-10:])
	}
	head, rest, _ := strings.Cut(res.Output, "\n[… ")
	_, tail, ok := strings.Cut(rest, " bytes omitted …]\n")
	if !ok || int64(len(head)+len(tail))+res.OmittedBytes != res.OutputBytes {
		t.Fatalf("omitted %d of %d, kept %d+%d", res.OmittedBytes, res.OutputBytes, len(head), len(tail))
	}
}

func TestForegroundOutputUTF8(t *testing.T) {
	f := newFixture(t, Config{MaxOutput: 1001})
	res := f.run(Request{Command: `i=0; while [ $i -lt 700 ]; do printf '€ü'; i=$((i+1)); done`})
	if !res.OutputTruncated || !utf8.ValidString(res.Output) || strings.ContainsRune(res.Output, utf8.RuneError) {
		t.Fatalf("%+v", res)
	}
}

func TestForegroundRefusals(t *testing.T) {
	f := newFixture(t, Config{MaxCommand: 100})
	for _, tc := range []struct {
		req  Request
		code string
	}{
		{Request{Command: ""}, CodeEmptyCommand},
		{Request{Command: " \n\t"}, CodeEmptyCommand},
		{Request{Command: "touch ran\x00"}, CodeInvalidCommand},
		{Request{Command: "touch ran; " + strings.Repeat("#", 100)}, CodeCommandTooLong},
		// mkfs.* is refused by name; were the guard broken, this
		// harmless made-up name would fail and "ran" would appear.
		{Request{Command: "mkfs.geturltest x; touch ran"}, CodeCatastrophic},
		{Request{Command: "touch ran", Timeout: -time.Second}, CodeTimeoutOutOfRange},
		{Request{Command: "touch ran", Timeout: time.Hour}, CodeTimeoutOutOfRange},
	} {
		job, err := f.r.Start(context.Background(), tc.req)
		var te *Error
		if job != nil || !errors.As(err, &te) || te.Code != tc.code {
			t.Errorf("%q: %v; want %s", tc.req.Command, err, tc.code)
			continue
		}
		if te.Fault().Code != tc.code {
			t.Errorf("transport code %q", te.Fault().Code)
		}
		if tc.code == CodeCatastrophic && (te.Refusal == nil || te.Refusal.Rule != RuleMkfs || te.Retryable) {
			t.Errorf("catastrophic: %+v", te)
		}
		if _, err := f.r.Launch(context.Background(), tc.req); !errors.As(err, &te) || te.Code != tc.code {
			t.Errorf("Launch %q: %v; want %s", tc.req.Command, err, tc.code)
		}
	}
	if _, err := os.Stat(f.path("ran")); err == nil {
		t.Fatal("a refused command ran")
	}
}

// TestForegroundTimeoutKillsTree: at the timeout the whole process group
// goes, including a grandchild that ignores SIGTERM (it gets SIGKILL after
// the grace period). The clock is driven by hand.
func TestForegroundTimeoutKillsTree(t *testing.T) {
	clk := newFakeClock()
	f := newFixture(t, Config{Clock: clk, Timeout: time.Minute})
	job, err := f.r.Start(context.Background(), Request{Command: `
		sh -c 'trap "" TERM; echo $$ > inner.pid; exec sleep 100' &
		echo $$ > leader.pid
		echo started
		wait`})
	if err != nil {
		t.Fatal(err)
	}
	leader, inner := f.waitPidFile("leader.pid"), f.waitPidFile("inner.pid")
	if !alive(leader) || !alive(inner) {
		t.Fatal("not started")
	}
	clk.waitPending(t, 1) // the timeout
	clk.Advance(time.Minute)
	// The leader dies of the SIGTERM. Once the reaper has reported that,
	// the sweep arms its grace timer beside terminate's unfired one; only
	// then may the clock run on, or a loaded machine's slow reaper would
	// be given up on (a status never read) before it could answer.
	waitDead(t, leader)
	clk.waitPending(t, 2)
	clk.drive(t, time.Second, job.Done()) // the inner one's grace period
	res, _ := job.Result()
	if !res.TimedOut || res.TimeoutMs != 60000 || res.ExitCode != -1 || res.Signal != "SIGTERM" || res.Output != "started\n" {
		t.Fatalf("%+v", res)
	}
	waitDead(t, leader)
	waitDead(t, inner)
}

// TestForegroundTimeoutSparesOthers: a process outside the command's group
// (here one the test started) survives the timeout kill and the shutdown.
func TestForegroundTimeoutSparesOthers(t *testing.T) {
	outsider := exec.Command("sleep", "100")
	outsider.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := outsider.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { outsider.Process.Kill(); outsider.Wait() })

	f := newFixture(t, Config{Timeout: 200 * time.Millisecond, KillGrace: 100 * time.Millisecond})
	res := f.run(Request{Command: "sleep 100"})
	if !res.TimedOut {
		t.Fatalf("%+v", res)
	}
	if err := f.m.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !alive(outsider.Process.Pid) {
		t.Fatal("an outside process was killed")
	}
}

// TestForegroundStraysKilled: what a foreground command leaves running in
// its group when its shell exits is ended with it.
func TestForegroundStraysKilled(t *testing.T) {
	f := newFixture(t, Config{KillGrace: 100 * time.Millisecond})
	res := f.run(Request{Command: `sleep 100 & echo $! > stray.pid; echo hi`})
	if res.ExitCode != 0 || res.Output != "hi\n" {
		t.Fatalf("%+v", res)
	}
	waitDead(t, f.waitPidFile("stray.pid"))
}

func TestForegroundAwaitAndPoll(t *testing.T) {
	f := newFixture(t, Config{})
	job, err := f.r.Start(context.Background(), Request{Command: `while [ ! -f go ]; do sleep 0.01; done; echo finished`})
	if err != nil {
		t.Fatal(err)
	}
	if _, finished, _ := job.Await(20 * time.Millisecond); finished {
		t.Fatal("finished before go")
	}
	<-job.Started()
	if job.State() != Running {
		t.Fatalf("state %s", job.State())
	}
	if res, err := job.Result(); res != nil || err != nil {
		t.Fatal("result before done")
	}
	os.WriteFile(f.path("go"), nil, 0o644)
	res, finished, err := job.Await(generous)
	if !finished || err != nil || res.Output != "finished\n" || job.State() != Done {
		t.Fatalf("%v %v %+v", finished, err, res)
	}
}

func TestForegroundCancel(t *testing.T) {
	f := newFixture(t, Config{})
	job, err := f.r.Start(context.Background(), Request{Command: `echo $$ > pid; exec sleep 100`})
	if err != nil {
		t.Fatal(err)
	}
	pid := f.waitPidFile("pid")
	job.Cancel()
	res, err := job.Wait(context.Background())
	if err != nil || !res.Canceled || res.TimedOut || res.Signal != "SIGTERM" {
		t.Fatalf("%v %+v", err, res)
	}
	waitDead(t, pid)
}

// TestGateCapsForeground: two foreground commands run at once, across
// sessions; a third waits its turn (state queued) and runs when one ends.
func TestGateCapsForeground(t *testing.T) {
	f := newFixture(t, Config{})
	other := f.m.Runner(f.scope) // a second session on the same manager
	wait := Request{Command: `echo $$ > "p$$"; while [ ! -f release ]; do sleep 0.01; done; echo done`}
	j1, _ := f.r.Start(context.Background(), wait)
	j2, _ := other.Start(context.Background(), wait)
	<-j1.Started()
	<-j2.Started()
	j3, err := other.Start(context.Background(), Request{Command: "echo third"})
	if err != nil {
		t.Fatal(err)
	}
	waitQueued(t, f.m.Gate(), 1)
	if j3.State() != Queued {
		t.Fatalf("third is %s", j3.State())
	}
	os.WriteFile(f.path("release"), nil, 0o644)
	for _, j := range []*Job[*Result]{j1, j2, j3} {
		res, err := j.Wait(context.Background())
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%v %+v", err, res)
		}
	}
	if res, _ := j3.Result(); res.Output != "third\n" || res.QueuedMs < 0 {
		t.Fatalf("%+v", res)
	}
}

// TestGateBusyRefusal: with no room to wait, the third is refused with the
// retryable terminal_busy.
func TestGateBusyRefusal(t *testing.T) {
	clk := newFakeClock()
	f := newFixture(t, Config{Clock: clk, GateWait: time.Second, GateQueue: 1})
	hold := Request{Command: `while [ ! -f release ]; do sleep 0.01; done`}
	j1, _ := f.r.Start(context.Background(), hold)
	j2, _ := f.r.Start(context.Background(), hold)
	<-j1.Started()
	<-j2.Started()
	j3, _ := f.r.Start(context.Background(), Request{Command: "echo queued"})
	waitQueued(t, f.m.Gate(), 1)
	j4, _ := f.r.Start(context.Background(), Request{Command: "echo refused"})
	<-j4.Done() // the queue (1) is full: refused at once
	_, err := j4.Result()
	var te *Error
	if !errors.As(err, &te) || te.Code != CodeBusy || !te.Retryable || te.Action != fault.ActionRetryLater ||
		!strings.Contains(te.Detail, "terminal concurrency capped") {
		t.Fatalf("%v", err)
	}
	clk.waitPending(t, 3) // two timeouts and j3's gate wait
	clk.Advance(time.Second)
	<-j3.Done() // waited GateWait in vain
	if _, err := j3.Result(); !errors.As(err, &te) || te.Code != CodeBusy {
		t.Fatalf("%v", err)
	}
	os.WriteFile(f.path("release"), nil, 0o644)
	j1.Wait(context.Background())
	j2.Wait(context.Background())
}

func TestForegroundShutdown(t *testing.T) {
	f := newFixture(t, Config{})
	job, _ := f.r.Start(context.Background(), Request{Command: `echo $$ > pid; exec sleep 100`})
	pid := f.waitPidFile("pid")
	if err := f.m.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := job.Result()
	if err != nil || !res.Canceled {
		t.Fatalf("%v %+v", err, res)
	}
	waitDead(t, pid)
	_, err = f.r.Start(context.Background(), Request{Command: "true"})
	var te *Error
	if !errors.As(err, &te) || te.Code != CodeShuttingDown {
		t.Fatalf("%v", err)
	}
}

// TestForegroundEnvStripped: the child's environment has no secrets, keeps
// the ordinary variables, and has PWD set to its own directory.
func TestForegroundEnvStripped(t *testing.T) {
	f := newFixture(t, Config{
		Env: []string{
			"PATH=" + os.Getenv("PATH"), "HOME=/home/tester", "LANG=C.UTF-8", "TERM=xterm-256color",
			"GITHUB_TOKEN=ghp_secret1", "OPENAI_API_KEY=secret2", "AWS_SECRET_ACCESS_KEY=secret3",
			"DB_PASSWORD=secret4", "DATABASE_URL=postgres://u:secret5@h/db", "GETMCP_OPENCODE_PASSWORD=secret6",
			"my_service_key=secret7", "INTERNAL_THING=secret8", "PWD=/hub/own/dir", "OLDPWD=/hub",
		},
		SecretPatterns: []string{"internal_*"},
	})
	res := f.run(Request{Command: "env", Cwd: "src"})
	env := map[string]string{}
	for line := range strings.Lines(res.Output) {
		k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
		env[k] = v
	}
	if strings.Contains(res.Output, "secret") || strings.Contains(res.Output, "/hub") {
		t.Fatalf("secret or hub path leaked:\n%s", res.Output)
	}
	for k, v := range map[string]string{"HOME": "/home/tester", "LANG": "C.UTF-8", "TERM": "xterm-256color", "PWD": "/project/src"} {
		if env[k] != v {
			t.Errorf("%s=%q; want %q", k, env[k], v)
		}
	}
	if env["PATH"] == "" {
		t.Error("PATH lost")
	}
}

// TestForegroundEnvFromHub: with no Env configured, children inherit the
// hub's environment minus its secrets.
func TestForegroundEnvFromHub(t *testing.T) {
	t.Setenv("GETURL_TEST_TOKEN", "hub-secret")
	t.Setenv("GETURL_TEST_PLAIN", "visible")
	f := newFixture(t, Config{})
	res := f.run(Request{Command: "env"})
	if strings.Contains(res.Output, "hub-secret") || !strings.Contains(res.Output, "GETURL_TEST_PLAIN=visible\n") {
		t.Fatalf("%s", res.Output)
	}
}

func TestResultJSON(t *testing.T) {
	f := newFixture(t, Config{})
	b, err := json.Marshal(f.run(Request{Command: "echo hi"}))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, k := range []string{"cwd", "exitCode", "timedOut", "durationMs", "output", "outputBytes", "outputTruncated"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %s in %s", k, b)
		}
	}
	for _, k := range []string{"signal", "canceled", "timeoutMs", "omittedBytes"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s present in %s", k, b)
		}
	}
}
