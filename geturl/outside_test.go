package geturl

import (
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// The hub's adapter started while `hub geturl serve` holds the state
// directory follows that geturl (its ports, a note) instead of failing the
// hub, and serves its own once that one stops.
func TestHubFollowsAGeturlStartedOutside(t *testing.T) {
	defer func(d time.Duration) { outsideCheck = d }(outsideCheck)
	outsideCheck = 10 * time.Millisecond
	outside := startBridge(t, nil)

	cfg := NewConfig()
	cfg.Port, cfg.ControlPort = 0, 0
	s := New(cfg)
	s.FollowOutside = true
	h := adaptertest.Start(t, s, adaptertest.Options{Dirs: &outside.Dirs})
	if len(h.Ports) != 2 || h.Ports[0] != outside.Ports[0] || h.Ports[1] != outside.Ports[1] {
		t.Fatalf("the hub reported ports %v, want the outside geturl's %v", h.Ports, outside.Ports)
	}
	if st := s.Status(); !strings.Contains(st.Note, "following the geturl started outside") {
		t.Fatalf("status while following = %+v", st)
	}

	if err := outside.Stop(); err != nil {
		t.Fatal(err)
	}
	adaptertest.WaitFor(t, "the hub to serve its own geturl once the outside one stopped", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.running
	})
	if st := s.Status(); strings.Contains(st.Note, "following") {
		t.Fatalf("status after taking over = %+v", st)
	}
	if _, err := Locate(outside.Dirs); err != nil {
		t.Fatalf("the hub's geturl wrote no control file the CLI finds: %v", err)
	}
}

// `hub geturl serve` and `hub start` launched together: the hub's adapter
// can find the state directory locked before that geturl has written its
// control file. It failed at once then, and with it the whole hub; it now
// waits a moment for the holder to show up, and serves when the lock comes
// free meanwhile.
func TestHubWaitsForAGeturlStillStarting(t *testing.T) {
	defer func(settle, poll time.Duration) { outsideSettle, outsidePoll = settle, poll }(outsideSettle, outsidePoll)
	outsideSettle, outsidePoll = 10*time.Second, 5*time.Millisecond // only a broken test waits this long

	other := startBridge(t, nil) // for an env to borrow
	env := *other.Env
	env.Dirs = adaptertest.TempDirs(t)
	holder, err := lockStateDir(env.Dirs) // a geturl that has not written its control file yet
	if err != nil {
		t.Fatal(err)
	}
	cfg := NewConfig()
	cfg.Port, cfg.ControlPort = 0, 0
	s := New(cfg)
	s.FollowOutside = true
	bg := adaptertest.ServeInBackground(s, env)
	defer bg.Stop()

	adaptertest.WaitFor(t, "Serve to wait for the lock's holder", func() bool {
		select {
		case <-bg.Done:
			t.Fatalf("Serve gave up on a state directory locked a moment: %v", bg.Err())
		default:
		}
		return strings.Contains(bg.Logs.String(), "waiting for it")
	})
	holder.Close()
	bg.AwaitReady(t, "the hub to serve once the lock came free")
	s.mu.Lock()
	running := s.running
	s.mu.Unlock()
	if !running {
		t.Fatal("ready but not serving")
	}
}
