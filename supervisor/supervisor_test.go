package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
}

func (c *fakeConfig) Validate() error   { return nil }
func (c *fakeConfig) NeedsUser() string { return c.Need }

// healthy serves until cancelled.
func healthy(ctx context.Context, env *adapters.Env, _ int) error {
	env.Ready(1111)
	<-ctx.Done()
	return nil
}

func newSupervisor(t *testing.T, lc *hub.Lifecycle, fakes ...*fakeAdapter) *Supervisor {
	t.Helper()
	var fs []adapters.Factory
	for _, f := range fakes {
		fs = append(fs, adapters.Factory{
			Name:      f.name,
			NewConfig: func() adapters.Config { return &fakeConfig{Base: adapters.Base{Enabled: true}} },
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

func TestFailureBeforeReadyStopsEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var goodStopped atomic.Bool
		good := &fakeAdapter{name: "good", serve: func(ctx context.Context, env *adapters.Env, _ int) error {
			env.Ready(1)
			<-ctx.Done()
			goodStopped.Store(true)
			return nil
		}}
		bad := &fakeAdapter{name: "bad", serve: func(context.Context, *adapters.Env, int) error {
			return errors.New("cannot listen on 127.0.0.1:4317: address already in use")
		}}
		s := newSupervisor(t, nil, good, bad)
		err := s.Serve(context.Background(), func([]adapters.Status) { t.Error("ready reported for a half-started hub") })
		if err == nil || !strings.Contains(err.Error(), "adapter bad: cannot listen") {
			t.Fatalf("Serve = %v", err)
		}
		if !goodStopped.Load() {
			t.Fatal("the healthy adapter was left running")
		}
		if bad.runs.Load() != 1 {
			t.Fatal("a startup failure was retried")
		}
	})
}

// A port held by another user is the one failure before Ready that does
// not stop the hub: the others serve, and status says what holds the port.
func TestPortHeldBeforeReadyLeavesTheRestRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		held := &hub.HeldError{Port: 8787, Owner: &portowner.Owner{UID: 65534, User: "nobody"}}
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
		if st.State != adapters.StateFailed || !strings.Contains(st.LastError, "127.0.0.1:8787 is held by another user (uid 65534 (nobody))") {
			t.Fatalf("blocked = %+v", st)
		}
		if st := statusOf(s, "good"); st.State != adapters.StateRunning {
			t.Fatalf("good = %+v", st)
		}
		if blocked.runs.Load() != 1 {
			t.Fatal("a startup failure was retried")
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
