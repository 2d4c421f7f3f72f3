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
