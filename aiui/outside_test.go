package aiui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// The hub's adapter started while `hub aiui mcp` runs a backend on its port
// follows that backend instead of failing (which stopped the whole hub),
// reports its port, and binds its own once it stops.
func TestHubFollowsABackendStartedOutside(t *testing.T) {
	defer func(d time.Duration) { outsideCheck = d }(outsideCheck)
	outsideCheck = 10 * time.Millisecond

	faceCfg := DefaultConfig()
	faceCfg.Port = 0
	face := adaptertest.Start(t, New(faceCfg, KindMCP), adaptertest.Options{})
	port := face.Port()

	hubCfg := DefaultConfig()
	hubCfg.Port = port
	srv := New(hubCfg, KindHub)
	h := adaptertest.Start(t, srv, adaptertest.Options{Dirs: &face.Dirs})
	if h.Port() != port {
		t.Fatalf("the hub reported port %d, want the outside backend's %d", h.Port(), port)
	}
	if st := srv.Status(); !strings.Contains(st.Note, "following the aiui backend") || len(st.Ports) != 1 || st.Ports[0] != port {
		t.Fatalf("status while following = %+v", st)
	}
	if srv.Port() != 0 {
		t.Fatal("the hub bound a backend of its own beside the outside one")
	}

	if err := face.Stop(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second) // only a broken test waits this long
	for srv.Port() != port {
		if time.Now().After(deadline) {
			t.Fatal("the hub did not take the port over once the outside backend stopped")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st := srv.Status(); st.Note != "" {
		t.Fatalf("note after taking over: %q", st.Note)
	}
	cl, err := Locate(context.Background(), face.Dirs)
	if err != nil || cl.Kind != KindHub {
		t.Fatalf("after the takeover the control file names %+v (%v), want the hub's backend", cl, err)
	}
}

// Only the hub follows: `hub aiui serve` on a taken port fails as before.
func TestServeDoesNotFollow(t *testing.T) {
	h, _ := start(t, nil)
	cfg := DefaultConfig()
	cfg.Port = h.Port()
	err := New(cfg, KindServe).Serve(context.Background(), h.Env)
	if err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("Serve on a taken port = %v, want an address-in-use error", err)
	}
}

// A control file taken over by a backend on another port (a later `hub
// aiui serve`, which picks any free port) does not mean the followed
// backend stopped: it still holds the hub's port. The hub's adapter used
// to give up following, fail to bind, and crash-loop into "failed", so
// nobody took the port over when that backend did stop.
func TestHubKeepsFollowingWhileTheBackendHoldsThePort(t *testing.T) {
	defer func(d time.Duration) { outsideCheck = d }(outsideCheck)
	outsideCheck = 10 * time.Millisecond

	faceCfg := DefaultConfig()
	faceCfg.Port = 0
	face := adaptertest.Start(t, New(faceCfg, KindMCP), adaptertest.Options{})
	port := face.Port()
	hubCfg := DefaultConfig()
	hubCfg.Port = port
	srv := New(hubCfg, KindHub)
	h := adaptertest.Start(t, srv, adaptertest.Options{Dirs: &face.Dirs})

	otherCfg := DefaultConfig()
	otherCfg.Port = 0
	other := adaptertest.Start(t, New(otherCfg, KindServe), adaptertest.Options{Dirs: &face.Dirs})
	if cl, err := Locate(context.Background(), face.Dirs); err != nil || cl.PID == 0 || cl.Base == NewClient(port, "").Base {
		t.Fatalf("the second backend did not take the control file: %+v %v", cl, err)
	}
	deadline := time.Now().Add(10 * time.Second) // only a broken test waits this long
	for !strings.Contains(h.Logs(), "the followed one still holds the port") {
		select {
		case <-h.Done():
			t.Fatalf("the hub's adapter stopped while the followed backend still holds the port: %v", h.Err())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the hub did not notice the control file changed hands")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st := srv.Status(); !strings.Contains(st.Note, "following the aiui backend") {
		t.Fatalf("status while the followed backend holds the port = %+v", st)
	}

	if err := face.Stop(); err != nil {
		t.Fatal(err)
	}
	for srv.Port() != port {
		select {
		case <-h.Done():
			t.Fatalf("the hub's adapter stopped instead of taking the port over: %v", h.Err())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the hub did not take the port over once the followed backend stopped")
		}
		time.Sleep(5 * time.Millisecond)
	}
	other.Stop()
}
