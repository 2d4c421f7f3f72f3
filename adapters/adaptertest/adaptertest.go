// Package adaptertest is the shared harness every adapter test uses: it
// starts an adapter in-process on an ephemeral loopback port with temporary
// directories, dials it as a browser page with a chosen Origin and Host,
// offers small HTTP helpers, routes the adapter's logs into t.Log, and checks
// for leaked goroutines at cleanup.
package adaptertest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/ws"
)

// Options tune Start. The zero value is fine for most tests.
type Options struct {
	// Name is the adapter's registry name, for logs and activity; it
	// defaults to the name of the adapter's package.
	Name string
	// Lifecycle defaults to one with no idle rules.
	Lifecycle *hub.Lifecycle
	// Heartbeat defaults to the hub defaults (30 s / 90 s).
	Heartbeat ws.HeartbeatConfig
	// Hub is what the adapter sees of a hub (nil: it runs alone).
	Hub adapters.HubView
	// ReadyTimeout bounds the wait for the adapter's Ready (default 10 s).
	ReadyTimeout time.Duration
	// NoLeakCheck skips goleak (for tests that deliberately leave work behind).
	NoLeakCheck bool
	// LeakIgnore adds goleak options, e.g. goleak.IgnoreTopFunction(...).
	LeakIgnore []goleak.Option
	// BodyPace, when set, replaces hub.DefaultBodyPace for the adapter's
	// servers (a short one tests that slow bodies are cut off).
	BodyPace hub.BodyPace
	// Follow paces following a bridge started outside (zero: the
	// defaults, seconds apart).
	Follow adapters.FollowTiming
	// Dirs, when set, are used instead of fresh temporary ones: a test
	// restarting an adapter over what an earlier run (of the same test)
	// left behind.
	Dirs *hub.Dirs
}

// Harness is a running adapter under test.
type Harness struct {
	T       testing.TB
	Name    string
	Adapter adapters.Adapter
	Env     *adapters.Env
	// Lifecycle is the one the adapter reports its activity to.
	Lifecycle *hub.Lifecycle
	Dirs      hub.Dirs
	// Ports are the ports the adapter reported to Ready.
	Ports []int

	logs *testWriter
	run  *adapters.Running
	once sync.Once
	err  error
}

// Start runs a in-process, exactly as `hub <adapter> serve` would
// (adapters.Standalone), and waits for its Ready. The adapter must have
// been configured for port 0 (or another free port) by the caller. HOME
// and the XDG variables point into t.TempDir() for the test's duration.
func Start(t testing.TB, a adapters.Adapter, opts Options) *Harness {
	t.Helper()
	if !opts.NoLeakCheck {
		checkLeaksAtEnd(t, opts.LeakIgnore)
	}
	var dirs hub.Dirs
	if opts.Dirs != nil {
		dirs = *opts.Dirs
	} else {
		dirs = TempDirs(t)
	}
	if opts.Name == "" {
		opts.Name = packageName(a)
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = 10 * time.Second
	}
	h := &Harness{T: t, Name: opts.Name, Adapter: a, Dirs: dirs, logs: newTestWriter(t)}
	ctx := context.Background()
	if opts.BodyPace != (hub.BodyPace{}) {
		ctx = hub.WithBodyPace(ctx, opts.BodyPace)
	}
	run, err := adapters.Standalone{
		Name: opts.Name, Adapter: a, Log: h.logs.logger(), Dirs: &dirs,
		Lifecycle: opts.Lifecycle, Heartbeat: opts.Heartbeat, Follow: opts.Follow, Hub: opts.Hub, ReadyTimeout: opts.ReadyTimeout,
	}.Start(ctx)
	if err != nil {
		t.Fatalf("%s did not start: %v", opts.Name, err)
	}
	h.run, h.Env, h.Lifecycle, h.Ports = run, run.Env, run.Lifecycle, run.Ports
	t.Cleanup(func() { h.Stop() })
	return h
}

// packageName is the last element of the adapter type's package path.
func packageName(a adapters.Adapter) string {
	t := reflect.TypeOf(a)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return path.Base(t.PkgPath())
}

// leakChecked remembers the tests whose leak check is already registered.
var leakChecked sync.Map

// checkLeaksAtEnd registers, once per test, a goleak check that runs after
// every harness of the test has stopped (cleanups run last-in first-out, so
// the first registered runs last). One check per test, with the baseline
// taken before the first harness started, means a second harness in the
// same test never mistakes the first one's goroutines for leaks.
func checkLeaksAtEnd(t testing.TB, extra []goleak.Option) {
	if _, loaded := leakChecked.LoadOrStore(t, true); loaded {
		return
	}
	opts := append([]goleak.Option{goleak.IgnoreCurrent()}, extra...)
	t.Cleanup(func() {
		leakChecked.Delete(t)
		if err := goleak.Find(opts...); err != nil {
			t.Errorf("goroutine leak after stopping the adapters: %v", err)
		}
	})
}

// Port is the first bound port.
func (h *Harness) Port() int {
	if len(h.Ports) == 0 {
		h.T.Fatalf("%s reported no ports", h.Name)
	}
	return h.Ports[0]
}

// Addr is "127.0.0.1:<port>".
func (h *Harness) Addr() string { return fmt.Sprintf("%s:%d", hub.LoopbackHost, h.Port()) }

// URL joins path onto http://127.0.0.1:<port>.
func (h *Harness) URL(path string) string { return "http://" + h.Addr() + path }

// WSURL joins path onto ws://127.0.0.1:<port>.
func (h *Harness) WSURL(path string) string { return "ws://" + h.Addr() + path }

// Stop cancels the adapter and waits (up to 15 s) for Serve to return; it
// returns what the run ended with (see adapters.Running.Wait). It is
// idempotent.
func (h *Harness) Stop() error {
	h.once.Do(func() {
		stopped := make(chan error, 1)
		go func() { stopped <- h.run.Stop() }()
		select {
		case h.err = <-stopped:
		case <-time.After(15 * time.Second):
			h.err = errors.New("Serve did not return within 15s of cancellation")
			h.T.Errorf("%s: %v", h.Name, h.err)
		}
	})
	return h.err
}

// Done is closed when the adapter has stopped, by itself (an idle exit) or
// by Stop; Err then says why. Reading it never takes anything from Stop.
func (h *Harness) Done() <-chan struct{} { return h.run.Done() }

// Err is what the run ended with, once Done is closed.
func (h *Harness) Err() error { return h.run.Wait() }

// TempDirs points HOME at a fresh temp directory for the test, with the
// XDG variables unset so that every directory is the default under it,
// and returns the resulting hub.Dirs (as hub.DirsFromEnv resolves them, in
// this process and in the processes the test starts).
func TempDirs(t testing.TB) hub.Dirs {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		t.Setenv(v, "") // empty is unset (XDG base directory rules)
	}
	d, err := hub.DirsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Logs returns everything the adapter has logged so far, for tests that
// assert on logs (e.g. that no secret ever reaches them).
func (h *Harness) Logs() string {
	h.logs.mu.Lock()
	defer h.logs.mu.Unlock()
	return h.logs.all.String()
}

// Logger returns a debug-level logger whose lines go to t.Log while the test
// runs and are dropped after it ends (late goroutines must not panic). In a
// benchmark it logs at info, the level users run at (configs/default.yaml):
// a debug line per request, kept in memory, was part of what benchmarks
// measured (a tenth of a geturl /k call's CPU).
func Logger(t testing.TB) *slog.Logger { return newTestWriter(t).logger() }

// testWriter sends log lines to t.Log and keeps a copy for Logs.
type testWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
	all  strings.Builder
}

func newTestWriter(t testing.TB) *testWriter {
	w := &testWriter{t: t}
	t.Cleanup(func() { w.mu.Lock(); w.done = true; w.mu.Unlock() })
	return w
}

func (w *testWriter) logger() *slog.Logger {
	level := slog.LevelDebug
	if _, bench := w.t.(*testing.B); bench {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all.Write(p)
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}
