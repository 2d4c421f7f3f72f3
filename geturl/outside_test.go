package geturl

import (
	"testing"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

// The hub's adapter started while `hub geturl serve` holds the state
// directory follows that geturl (its ports, a note) instead of failing the
// hub, and serves its own once that one stops. A state directory locked by
// a geturl that has not written its control file yet is one starting.
func TestFollow(t *testing.T) {
	hubAdapter := func(t *testing.T, _ []int) adapters.Adapter {
		cfg := NewConfig()
		cfg.Port, cfg.ControlPort = 0, 0
		s := New(cfg)
		s.FollowOutside = true
		return s
	}
	adaptertest.TestFollow(t, adaptertest.FollowKit{
		Outside: func(t *testing.T, dirs hub.Dirs) *adaptertest.Harness {
			cfg := NewConfig()
			cfg.Port, cfg.ControlPort = 0, 0
			return adaptertest.Start(t, New(cfg), adaptertest.Options{Dirs: &dirs})
		},
		Hub: hubAdapter,
		Hold: func(t *testing.T, dirs hub.Dirs) ([]int, func()) {
			lock, err := lockStateDir(dirs)
			if err != nil {
				t.Fatal(err)
			}
			return []int{0, 0}, func() { lock.Close() }
		},
		Note: "following the geturl started outside",
	})
}

// Once the hub's adapter took over, the operator CLI finds it.
func TestTakeoverWritesTheControlFile(t *testing.T) {
	outside := startBridge(t, nil)
	cfg := NewConfig()
	cfg.Port, cfg.ControlPort = 0, 0
	s := New(cfg)
	s.FollowOutside = true
	adaptertest.Start(t, s, adaptertest.Options{Dirs: &outside.Dirs, Follow: adaptertest.FastFollow})
	if err := outside.Stop(); err != nil {
		t.Fatal(err)
	}
	adaptertest.WaitFor(t, "the hub to serve its own geturl once the outside one stopped", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.running
	})
	if _, err := Locate(outside.Dirs); err != nil {
		t.Fatalf("the hub's geturl wrote no control file the CLI finds: %v", err)
	}
}
