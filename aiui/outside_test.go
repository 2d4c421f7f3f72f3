package aiui

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

// faceThenHub starts a backend as `hub aiui mcp` does, then the hub's
// adapter on that backend's port, in the same dirs.
func faceThenHub(t *testing.T) (face *adaptertest.Harness, srv *Server, h *adaptertest.Harness) {
	t.Helper()
	faceCfg := DefaultConfig()
	faceCfg.Port = 0
	face = adaptertest.Start(t, newKind(faceCfg, KindMCP), adaptertest.Options{})
	hubCfg := DefaultConfig()
	hubCfg.Port = face.Port()
	srv = New(hubCfg)
	h = adaptertest.Start(t, srv, adaptertest.Options{Dirs: &face.Dirs, Follow: adaptertest.FastFollow})
	return face, srv, h
}

// The hub's adapter started while `hub aiui mcp` runs a backend on its port
// follows that backend instead of failing (which stopped the whole hub):
// the shared policy. A raw listener on the port with no control file is a
// backend starting there.
func TestFollow(t *testing.T) {
	adaptertest.TestFollow(t, adaptertest.FollowKit{
		Outside: func(t *testing.T, dirs hub.Dirs) *adaptertest.Harness {
			cfg := DefaultConfig()
			cfg.Port = 0
			return adaptertest.Start(t, newKind(cfg, KindMCP), adaptertest.Options{Dirs: &dirs})
		},
		Hub: func(t *testing.T, ports []int) adapters.Adapter {
			cfg := DefaultConfig()
			cfg.Port = ports[0]
			return New(cfg)
		},
		Hold: func(t *testing.T, _ hub.Dirs) ([]int, func()) {
			holder, err := net.Listen("tcp4", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			return []int{holder.Addr().(*net.TCPAddr).Port}, func() { holder.Close() }
		},
		Note: "following the aiui backend",
	})
}

// Once the hub's adapter took the port over, the control file names its
// backend.
func TestTakeoverWritesTheControlFile(t *testing.T) {
	face, srv, _ := faceThenHub(t)
	port := face.Port()
	if srv.Port() != 0 {
		t.Fatal("the hub bound a backend of its own beside the outside one")
	}
	if err := face.Stop(); err != nil {
		t.Fatal(err)
	}
	adaptertest.WaitFor(t, "the hub to take the port over once the outside backend stopped", func() bool { return srv.Port() == port })
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
	err := newKind(cfg, KindServe).Serve(context.Background(), h.Env)
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
	face, srv, h := faceThenHub(t)
	port := face.Port()

	otherCfg := DefaultConfig()
	otherCfg.Port = 0
	other := adaptertest.Start(t, newKind(otherCfg, KindServe), adaptertest.Options{Dirs: &face.Dirs})
	if cl, err := Locate(context.Background(), face.Dirs); err != nil || cl.PID == 0 || cl.Base == NewClient(port, "").Base {
		t.Fatalf("the second backend did not take the control file: %+v %v", cl, err)
	}
	adaptertest.WaitFor(t, "the hub to notice the control file changed hands", func() bool {
		failIfDone(t, h, "while the followed backend still holds the port")
		return strings.Contains(h.Logs(), "the followed one still holds the port")
	})
	if st := srv.Status(); !strings.Contains(st.Note, "following the aiui backend") {
		t.Fatalf("status while the followed backend holds the port = %+v", st)
	}

	if err := face.Stop(); err != nil {
		t.Fatal(err)
	}
	adaptertest.WaitFor(t, "the hub to take the port over once the followed backend stopped", func() bool {
		failIfDone(t, h, "instead of taking the port over")
		return srv.Port() == port
	})
	other.Stop()
}

// failIfDone fails the test when h's adapter has stopped.
func failIfDone(t *testing.T, h *adaptertest.Harness, when string) {
	t.Helper()
	select {
	case <-h.Done():
		t.Fatalf("the hub's adapter stopped %s: %v", when, h.Err())
	default:
	}
}

// A port held by something that never shows up as an aiui backend still
// fails the start, once the wait is over.
func TestHubFailsBesideAStranger(t *testing.T) {
	holder, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	h, _ := start(t, nil)
	env := *h.Env
	env.Dirs = adaptertest.TempDirs(t)
	env.Follow = adapters.FollowTiming{Settle: 20 * time.Millisecond, Poll: 5 * time.Millisecond}
	cfg := DefaultConfig()
	cfg.Port = holder.Addr().(*net.TCPAddr).Port
	if err := New(cfg).Serve(context.Background(), &env); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("Serve beside a stranger = %v, want address in use", err)
	}
}

// A face that starts its own backend while another one (the hub's,
// started beside it) is starting on the preferred port used to fall back
// to any free port: a second backend nobody reaches, advertised to the
// overlay in its own registry record. It now uses the one on the port.
func TestFaceUsesABackendStartingOnItsPort(t *testing.T) {
	h, _ := start(t, nil)
	port := h.Port()
	own := &inProcess{dirs: h.Dirs, lc: hub.NewLifecycle(hub.IdleRules{}), log: slog.New(slog.DiscardHandler), port: port, follow: adaptertest.FastFollow}
	defer own.stop()
	cl, err := own.start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cl.Base != NewClient(port, "").Base {
		t.Fatalf("the face uses %s, want the backend on port %d", cl.Base, port)
	}
	own.mu.Lock()
	started := own.halt != nil
	own.mu.Unlock()
	if started {
		t.Fatal("the face started a second backend beside the one on its port")
	}
}
