package terminal

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/internal/proctest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// generous is the deadline for anything a test waits for in real time. No
// test asserts a duration shorter than this.
const generous = 30 * time.Second

const markerVar = "GETURL_TERMINAL_TEST"

type fixture struct {
	t      testing.TB
	root   string // host path of the project (canonical)
	scope  *sandbox.Scope
	m      *Manager
	r      *Runner
	marker string
}

// newFixture makes a project (src/ and file.txt) and a Manager whose
// children all carry a unique marker variable, so the cleanup can prove
// that nothing they started is left running.
func newFixture(t testing.TB, cfg Config) *fixture {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	scope, err := sandbox.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 8)
	rand.Read(b)
	marker := hex.EncodeToString(b)
	if cfg.Env == nil {
		cfg.Env = os.Environ()
	}
	cfg.Env = append(append([]string(nil), cfg.Env...), markerVar+"="+marker)
	f := &fixture{t: t, root: scope.Root(), scope: scope, m: NewManager(cfg), marker: marker}
	f.r = f.m.Runner(scope)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), generous)
		defer cancel()
		if err := f.m.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if live := waitGone(f.marker); len(live) > 0 {
			t.Errorf("processes left behind: %v", live)
			for _, pid := range live {
				killPid(pid)
			}
		}
	})
	return f
}

func (f *fixture) path(rel string) string { return filepath.Join(f.root, rel) }

// run runs a foreground command to its end.
func (f *fixture) run(req Request) *Result {
	f.t.Helper()
	job, err := f.r.Start(context.Background(), req)
	if err != nil {
		f.t.Fatalf("Start(%q): %v", req.Command, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), generous)
	defer cancel()
	res, err := job.Wait(ctx)
	if err != nil {
		f.t.Fatalf("Wait(%q): %v", req.Command, err)
	}
	return res
}

// launch runs a background launch to the end of its startup window.
func (f *fixture) launch(req Request) *Launched {
	f.t.Helper()
	job, err := f.r.Launch(context.Background(), req)
	if err != nil {
		f.t.Fatalf("Launch(%q): %v", req.Command, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), generous)
	defer cancel()
	res, err := job.Wait(ctx)
	if err != nil {
		f.t.Fatalf("Wait(%q): %v", req.Command, err)
	}
	return res
}

// waitFile waits until a file the command writes exists and is complete
// (ends in a newline), and returns its content.
func (f *fixture) waitFile(rel string) string {
	f.t.Helper()
	deadline := time.Now().Add(generous)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(f.path(rel))
		if err == nil && bytes.HasSuffix(b, []byte("\n")) {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.t.Fatalf("%s never appeared", rel)
	return ""
}

func (f *fixture) waitPidFile(rel string) int {
	f.t.Helper()
	pid, err := strconv.Atoi(f.waitFile(rel))
	if err != nil {
		f.t.Fatal(err)
	}
	return pid
}

var alive = proctest.Alive

// markedProcesses lists live processes whose environment holds the marker.
func markedProcesses(marker string) []int {
	if runtime.GOOS != "linux" {
		return nil
	}
	ents, _ := os.ReadDir("/proc")
	needle := []byte(markerVar + "=" + marker + "\x00")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err == nil && bytes.Contains(env, needle) && alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// waitGone waits (generously) for every marked process to end and returns
// those that did not.
func waitGone(marker string) []int {
	deadline := time.Now().Add(generous / 3)
	for {
		live := markedProcesses(marker)
		if len(live) == 0 || time.Now().After(deadline) {
			return live
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitDead(t testing.TB, pid int) {
	t.Helper()
	proctest.WaitDead(t, pid, generous)
}

func killPid(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// fakeClock is a Clock driven by hand.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, fakeWaiter{c.now.Add(d), ch})
	return ch
}

// Advance moves time on and fires the timers that are due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = kept
}

func (c *fakeClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

// waitPending waits until at least n timers are pending.
func (c *fakeClock) waitPending(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(generous)
	for c.pending() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d timers pending, want %d", c.pending(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// drive advances the clock by step whenever a timer is pending, until done
// is closed.
func (c *fakeClock) drive(t testing.TB, step time.Duration, done <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(generous)
	for {
		select {
		case <-done:
			return
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("never done")
		}
		if c.pending() > 0 {
			c.Advance(step)
		}
		time.Sleep(time.Millisecond)
	}
}
