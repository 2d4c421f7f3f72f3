package pixelle

import (
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

// The hub's relay started while a compatible relay for the same website
// holds its port reuses it (§Setup: "Reuse a compatible relay if it
// permits this origin") instead of failing the hub, and starts its own
// once that one stops: the shared follow policy.
func TestFollow(t *testing.T) {
	adaptertest.TestFollow(t, adaptertest.FollowKit{
		Outside: func(t *testing.T, dirs hub.Dirs) *adaptertest.Harness {
			s := New(&Config{Website: website})
			return adaptertest.Start(t, s, adaptertest.Options{Dirs: &dirs})
		},
		Hub: func(t *testing.T, ports []int) adapters.Adapter {
			s := New(&Config{Website: website, Port: ports[0]})
			s.FollowOutside = true
			return s
		},
		Note: "reusing the compatible relay",
	})
}

// Something on the port that is not a compatible relay for this website
// is never reused: the hub fails as before (and stops nothing).
func TestHubDoesNotReuseAnIncompatibleListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"ok":true,"version":"0.1.0"}`))
	})}
	go srv.Serve(ln)
	defer srv.Close()
	s := New(&Config{Website: website, Port: ln.Addr().(*net.TCPAddr).Port})
	s.FollowOutside = true
	if err := s.Serve(t.Context(), &adapters.Env{}); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("Serve beside an incompatible listener = %v, want address in use", err)
	}
}

// A followed relay that stops answering /health for a while (suspended
// with Ctrl-Z, or too slow) still holds the port. The hub's adapter used
// to take that for a stop, fail to bind, and crash-loop into "failed", so
// it never started its own relay when that one did stop. It now waits for
// the port, says so in its status, and takes the port once it is free.
func TestHubWaitsForTheFollowedRelaysPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	var answering atomic.Bool
	answering.Store(true)
	outside := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !answering.Load() {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Access-Control-Allow-Origin", website)
		w.Write([]byte(`{"ok":true,"version":"` + ProtocolVersion + `"}`))
	})}
	served := make(chan struct{})
	go func() { defer close(served); outside.Serve(ln) }()
	defer outside.Close()

	s := New(&Config{Website: website, Port: port})
	s.FollowOutside = true
	h := adaptertest.Start(t, s, adaptertest.Options{Follow: adaptertest.FastFollow})
	answering.Store(false)
	noteSays := func(what, when string) func() bool {
		return func() bool {
			select {
			case <-h.Done():
				t.Fatalf("the hub's relay stopped %s: %v", when, h.Err())
			default:
			}
			return strings.Contains(s.Status().Note, what)
		}
	}
	adaptertest.WaitFor(t, "the status to say the followed relay does not answer",
		noteSays("does not answer", "while the followed one holds the port"))
	answering.Store(true)
	adaptertest.WaitFor(t, "the status to say the followed relay is reused again",
		noteSays("reusing the compatible relay", "while the followed one holds the port"))

	outside.Close()
	<-served
	adaptertest.WaitFor(t, "the hub to start its own relay once the port was free", func() bool {
		noteSays("", "instead of taking the port over")()
		return s.isRunning()
	})
}

// isRunning reports whether the relay serves on its own listener.
func (s *Server) isRunning() bool {
	rl := s.cur.Load()
	if rl == nil {
		return false
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return !rl.closed
}
