package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/portowner"
)

// fakeAdapter is a test adapter whose Serve is a script.
type fakeAdapter struct {
	name  string
	serve func(ctx context.Context, env *adapters.Env, run int) error
	runs  atomic.Int32
}

func (f *fakeAdapter) Name() string { return f.name }
func (f *fakeAdapter) Serve(ctx context.Context, env *adapters.Env) error {
	return f.serve(ctx, env, int(f.runs.Add(1)))
}
func (f *fakeAdapter) Status() adapters.Status { return adapters.Status{AgentSessions: 7} }

type fakeConfig struct {
	adapters.Base `yaml:",inline"`
	Need          string `yaml:"need"`
	Port          int    `yaml:"port"`
}

func (c *fakeConfig) Validate() error   { return nil }
func (c *fakeConfig) NeedsUser() string { return c.Need }
func (c *fakeConfig) ConfigPorts() []adapters.PortKey {
	if c.Port == 0 {
		return nil
	}
	return []adapters.PortKey{{Key: "port", Ports: []int{c.Port}}}
}

// fakePort is the port the first fake adapter's section names, the next
// one's fakePort+1, and so on: port keys are what the fix of a busy port
// points at.
const fakePort = 4317

// healthy serves until cancelled.
func healthy(ctx context.Context, env *adapters.Env, _ int) error {
	env.Ready(1111)
	<-ctx.Done()
	return nil
}

func newSupervisor(t *testing.T, lc *hub.Lifecycle, fakes ...*fakeAdapter) *Supervisor {
	t.Helper()
	var fs []adapters.Factory
	for i, f := range fakes {
		fs = append(fs, adapters.Factory{
			Name:      f.name,
			NewConfig: func() adapters.Config { return &fakeConfig{Base: adapters.Base{Enabled: true}, Port: fakePort + i} },
			New:       func(adapters.Config) (adapters.Adapter, error) { return f, nil },
		})
	}
	fs = append(fs,
		adapters.Factory{Name: "zoff", NewConfig: func() adapters.Config { return &fakeConfig{} },
			New: func(adapters.Config) (adapters.Adapter, error) { t.Fatal("disabled adapter built"); return nil, nil }},
		adapters.Factory{Name: "zneeds", NewConfig: func() adapters.Config {
			return &fakeConfig{Base: adapters.Base{Enabled: true}, Need: "disabled: set adapters.zneeds.x"}
		}, New: func(adapters.Config) (adapters.Adapter, error) {
			t.Fatal("adapter needing the user built")
			return nil, nil
		}},
		adapters.Factory{Name: "zstub", NewConfig: func() adapters.Config { return &fakeConfig{Base: adapters.Base{Enabled: true}} },
			New: func(adapters.Config) (adapters.Adapter, error) { return nil, adapters.ErrNotImplemented }},
	)
	cfg, err := ParseConfig(nil, "test", adapters.NewRegistry(fs...))
	if err != nil {
		t.Fatal(err)
	}
	if lc == nil {
		lc = hub.NewLifecycle(hub.IdleRules{})
	}
	s, err := New(Options{Config: cfg, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Lifecycle: lc,
		ShutdownTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func statusOf(s *Supervisor, name string) adapters.Status {
	for _, st := range s.Status() {
		if st.Name == name {
			return st
		}
	}
	return adapters.Status{}
}

func serveInBackground(s *Supervisor) (context.CancelFunc, <-chan error, <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	ready := make(chan struct{})
	go func() { errc <- s.Serve(ctx, func([]adapters.Status) { close(ready) }) }()
	return cancel, errc, ready
}

func TestPanickingAdapterIsRestartedThenFailedWhileOthersRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		crasher := &fakeAdapter{name: "crasher", serve: func(ctx context.Context, env *adapters.Env, run int) error {
			env.Ready(2222)
			time.Sleep(time.Second)
			panic("boom")
		}}
		good := &fakeAdapter{name: "good", serve: healthy}
		s := newSupervisor(t, nil, crasher, good)
		cancel, errc, ready := serveInBackground(s)
		<-ready
		time.Sleep(10 * time.Minute) // far beyond five capped backoffs
		synctest.Wait()
		st := statusOf(s, "crasher")
		if st.State != adapters.StateFailed || !strings.Contains(st.LastError, "panic: boom") {
			t.Fatalf("crasher status = %+v, want failed with the panic", st)
		}
		if len(st.Ports) != 0 {
			t.Fatalf("a failed adapter shows ports %v that nothing serves", st.Ports)
		}
		if got := crasher.runs.Load(); got != int32(DefaultBackoff.MaxFailures) {
			t.Fatalf("crasher ran %d times, want %d", got, DefaultBackoff.MaxFailures)
		}
		if st.Restarts != DefaultBackoff.MaxFailures-1 {
			t.Fatalf("restarts = %d", st.Restarts)
		}
		if g := statusOf(s, "good"); g.State != adapters.StateRunning || g.AgentSessions != 7 || g.Ports[0] != 1111 {
			t.Fatalf("good adapter = %+v, want running with its own status", g)
		}
		cancel()
		if err := <-errc; err != nil {
			t.Fatalf("Serve = %v", err)
		}
	})
}

func TestRestartBackoffGrowsAndRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var starts []time.Time
		flaky := &fakeAdapter{name: "flaky", serve: func(ctx context.Context, env *adapters.Env, run int) error {
			starts = append(starts, time.Now())
			env.Ready(3333)
			if run <= 3 {
				return errors.New("lost the listener")
			}
			<-ctx.Done()
			return nil
		}}
		s := newSupervisor(t, nil, flaky)
		cancel, errc, ready := serveInBackground(s)
		<-ready
		time.Sleep(time.Minute)
		synctest.Wait()
		st := statusOf(s, "flaky")
		if st.State != adapters.StateRunning || st.Restarts != 3 || st.LastError != "lost the listener" {
			t.Fatalf("status = %+v", st)
		}
		for i := 1; i < len(starts); i++ {
			gap := starts[i].Sub(starts[i-1])
			step := DefaultBackoff.Base << (i - 1)
			if gap < step/2 || gap > step {
				t.Errorf("restart %d after %v, want within [%v, %v]", i, gap, step/2, step)
			}
		}
		cancel()
		<-errc
	})
}

// busyPort binds a loopback port for the test and returns it: what a
// stale bridge or another program holding an adapter's port looks like.
func busyPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// An adapter that cannot start is that adapter's problem: the others
// serve, the hub reports ready, the failed one shows the cause and the
// fix, and it is retried with capped backoff until its port frees.
func TestStartFailureLeavesTheRestRunningAndRetries(t *testing.T) {
	port := busyPort(t) // outside the bubble: a real socket, held throughout
	synctest.Test(t, func(t *testing.T) {
		var starts []time.Time
		var free atomic.Bool
		bad := &fakeAdapter{name: "bad", serve: func(ctx context.Context, env *adapters.Env, run int) error {
			starts = append(starts, time.Now())
			if !free.Load() {
				_, _, err := hub.Listen([]int{port})
				return err
			}
			env.Ready(port)
			<-ctx.Done()
			return nil
		}}
		s := newSupervisor(t, nil, &fakeAdapter{name: "good", serve: healthy}, bad)
		cancel, errc, ready := serveInBackground(s)
		select {
		case <-ready:
		case err := <-errc:
			t.Fatalf("one busy port kept the hub from starting: %v", err)
		}
		st := statusOf(s, "bad")
		if st.State != adapters.StateFailed || !strings.Contains(st.LastError, fmt.Sprintf("cannot listen on 127.0.0.1:%d", port)) {
			t.Fatalf("bad = %+v, want failed with the bind error", st)
		}
		for _, want := range []string{fmt.Sprintf("free port %d", port), "adapters.bad.port", "adapters.bad.enabled: false"} {
			if !strings.Contains(st.Fix, want) {
				t.Errorf("fix %q does not say %q", st.Fix, want)
			}
		}
		if st.RetryAt.IsZero() || len(st.Ports) != 0 {
			t.Errorf("bad = %+v, want a retry pending and no ports", st)
		}
		if g := statusOf(s, "good"); g.State != adapters.StateRunning {
			t.Fatalf("good = %+v", g)
		}
		time.Sleep(time.Hour) // far beyond the crash-loop limit of a running adapter
		synctest.Wait()
		if n := len(starts); n < 100 {
			t.Fatalf("tried %d times in an hour, want retries every backoff.Max at most", n)
		}
		for i := 1; i < len(starts); i++ {
			step := min(DefaultBackoff.Base<<min(i-1, 20), DefaultBackoff.Max)
			if gap := starts[i].Sub(starts[i-1]); gap < step/2 || gap > step {
				t.Fatalf("retry %d after %v, want within [%v, %v]", i, gap, step/2, step)
			}
		}
		if st := statusOf(s, "bad"); st.State != adapters.StateFailed || st.Restarts != 0 {
			t.Fatalf("bad after an hour = %+v", st)
		}
		free.Store(true) // the port frees
		time.Sleep(DefaultBackoff.Max)
		synctest.Wait()
		if st := statusOf(s, "bad"); st.State != adapters.StateRunning || st.Fix != "" || !st.RetryAt.IsZero() {
			t.Fatalf("bad once its port freed = %+v, want running with no fix or retry", st)
		}
		cancel()
		if err := <-errc; err != nil {
			t.Fatalf("Serve = %v", err)
		}
	})
}

// When adapters were to run and not one could, the hub does not start:
// Serve names each failure with its fix.
func TestNoAdapterStartsIsAnError(t *testing.T) {
	port := busyPort(t)
	synctest.Test(t, func(t *testing.T) {
		fail := func(context.Context, *adapters.Env, int) error {
			_, _, err := hub.Listen([]int{port})
			return err
		}
		s := newSupervisor(t, nil, &fakeAdapter{name: "one", serve: fail}, &fakeAdapter{name: "two", serve: fail})
		err := s.Serve(context.Background(), func([]adapters.Status) { t.Error("ready reported for a hub that runs nothing") })
		var se *StartError
		if !errors.As(err, &se) || len(se.Failed) != 2 {
			t.Fatalf("Serve = %v, want a StartError naming both", err)
		}
		for _, want := range []string{"no adapter could start", "adapter one: cannot listen", "adapters.two.port"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q does not say %q", err, want)
			}
		}
	})
}

// A port held by another user is a failure to start like any other: the
// others serve, status says what holds the port, and it is retried.
func TestPortHeldBeforeReadyLeavesTheRestRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		held := &hub.HeldError{Port: fakePort + 1, Owner: &portowner.Owner{UID: 65534, User: "nobody"}}
		blocked := &fakeAdapter{name: "blocked", serve: func(context.Context, *adapters.Env, int) error {
			return fmt.Errorf("%w; the tab dials it first", held)
		}}
		s := newSupervisor(t, nil, &fakeAdapter{name: "good", serve: healthy}, blocked)
		cancel, errc, ready := serveInBackground(s)
		select {
		case <-ready:
		case err := <-errc:
			t.Fatalf("the hub did not start: %v", err)
		}
		st := statusOf(s, "blocked")
		if st.State != adapters.StateFailed || !strings.Contains(st.LastError, fmt.Sprintf("127.0.0.1:%d is held by another user (uid 65534 (nobody))", fakePort+1)) {
			t.Fatalf("blocked = %+v", st)
		}
		if !strings.Contains(st.Fix, "adapters.blocked.port") {
			t.Fatalf("fix = %q", st.Fix)
		}
		if st := statusOf(s, "good"); st.State != adapters.StateRunning {
			t.Fatalf("good = %+v", st)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if blocked.runs.Load() < 2 {
			t.Fatal("a port held by another user was never tried again")
		}
		cancel()
		if err := <-errc; err != nil {
			t.Fatalf("Serve = %v", err)
		}
	})
}

func TestShutdownDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang := &fakeAdapter{name: "hang", serve: func(ctx context.Context, env *adapters.Env, _ int) error {
			env.Ready(1)
			<-ctx.Done()
			time.Sleep(time.Hour) // ignores shutdown
			return nil
		}}
		s := newSupervisor(t, nil, hang, &fakeAdapter{name: "good", serve: healthy})
		cancel, errc, ready := serveInBackground(s)
		<-ready
		start := time.Now()
		cancel()
		err := <-errc
		if !errors.Is(err, ErrShutdownTimeout) || !strings.Contains(err.Error(), "hang still running") || strings.Contains(err.Error(), "good") {
			t.Fatalf("Serve = %v", err)
		}
		if d := time.Since(start); d != 10*time.Second {
			t.Fatalf("gave up after %v, want the 10s deadline", d)
		}
		time.Sleep(2 * time.Hour) // let the hung adapter finish inside the bubble
	})
}

func TestHubIdleExit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lc := hub.NewLifecycle(hub.IdleRules{NoPageWithin: 30 * time.Minute, AgentIdle: 2 * time.Hour})
		s := newSupervisor(t, lc, &fakeAdapter{name: "good", serve: healthy})
		start := time.Now()
		_, errc, _ := serveInBackground(s)
		err := <-errc
		var idle *hub.IdleError
		if !errors.As(err, &idle) || !strings.Contains(idle.Reason, "no page attached within 30m") {
			t.Fatalf("Serve = %v", err)
		}
		if d := time.Since(start); d != 30*time.Minute {
			t.Fatalf("idle exit after %v", d)
		}
		if st := statusOf(s, "good"); st.State != adapters.StateStopped {
			t.Fatalf("adapter state after idle exit = %s", st.State)
		}
	})
}

func TestAdapterIdleExitIsNotACrash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &fakeAdapter{name: "sleepy", serve: func(ctx context.Context, env *adapters.Env, _ int) error {
			env.Ready(1)
			time.Sleep(time.Minute)
			return &hub.IdleError{Reason: "no agent"}
		}}
		s := newSupervisor(t, nil, a)
		cancel, errc, ready := serveInBackground(s)
		<-ready
		time.Sleep(time.Hour)
		synctest.Wait()
		if st := statusOf(s, "sleepy"); st.State != adapters.StateIdleExited || st.Restarts != 0 {
			t.Fatalf("status = %+v", st)
		}
		cancel()
		<-errc
	})
}

func TestStatusOfUnrunnableAdapters(t *testing.T) {
	s := newSupervisor(t, nil)
	for name, want := range map[string]adapters.State{
		"zoff": adapters.StateDisabled, "zneeds": adapters.StateDisabled, "zstub": adapters.StateNotImplemented,
	} {
		if st := statusOf(s, name); st.State != want {
			t.Errorf("%s: state %q, want %q", name, st.State, want)
		}
	}
	if n := statusOf(s, "zneeds").Note; n != "disabled: set adapters.zneeds.x" {
		t.Errorf("note = %q", n)
	}
}

func TestBackoffDelay(t *testing.T) {
	b := DefaultBackoff
	for n := 1; n <= 12; n++ {
		step := min(b.Base<<(n-1), b.Max)
		for range 50 {
			if d := b.Delay(n); d < step/2 || d > step {
				t.Fatalf("Delay(%d) = %v, want in [%v, %v]", n, d, step/2, step)
			}
		}
	}
}
