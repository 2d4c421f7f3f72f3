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
	deadline := time.Now().Add(10 * time.Second) // only a broken test waits this long
	for {
		s.mu.Lock()
		running := s.running
		s.mu.Unlock()
		if running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the hub did not serve its own geturl once the outside one stopped")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st := s.Status(); strings.Contains(st.Note, "following") {
		t.Fatalf("status after taking over = %+v", st)
	}
	if _, err := Locate(outside.Dirs); err != nil {
		t.Fatalf("the hub's geturl wrote no control file the CLI finds: %v", err)
	}
}
