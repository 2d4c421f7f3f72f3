package adaptertest

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
)

// FollowKit is one bridge as the shared follow tests (TestFollow) drive
// it: the hub's adapter started beside the same bridge run outside the hub.
type FollowKit struct {
	// Outside starts the bridge as it runs outside the hub, in dirs.
	Outside func(t *testing.T, dirs hub.Dirs) *Harness
	// Hub returns the adapter as the hub runs it (following on),
	// configured for ports: those of the bridge outside, or Hold's.
	Hub func(t *testing.T, ports []int) adapters.Adapter
	// Hold takes, in dirs, what a bridge that is starting holds a moment
	// before it writes the file that names it (its first port, its state
	// directory's lock), and returns the ports to configure the hub's
	// adapter for and the release. Nil for a bridge that does not wait for
	// a holder to show up.
	Hold func(t *testing.T, dirs hub.Dirs) (ports []int, release func())
	// Note is part of the hub's adapter's status note while it follows.
	Note string
}

// FastFollow paces following in tests: a broken test waits out Settle.
var FastFollow = adapters.FollowTiming{Check: 10 * time.Millisecond, Poll: 5 * time.Millisecond, Settle: WaitTimeout}

// TestFollow is the follow-then-take-over policy (adapters.Follow), run
// for one bridge.
func TestFollow(t *testing.T, kit FollowKit) {
	t.Run("FollowsThenTakesOver", func(t *testing.T) { followsThenTakesOver(t, kit) })
	if kit.Hold != nil {
		t.Run("WaitsForOneStillStarting", func(t *testing.T) { waitsForOneStarting(t, kit) })
		t.Run("StoppedWhileWaitingBindsNothing", func(t *testing.T) { stoppedWhileWaiting(t, kit) })
	}
}

// The hub's adapter started beside the bridge running outside the hub
// binds nothing: it reports that bridge's ports as its own (so hub status,
// hub mcp and the shell reach it), says so, holds the idle rules off, and
// serves its own once that bridge stops.
func followsThenTakesOver(t *testing.T, kit FollowKit) {
	dirs := TempDirs(t)
	outside := kit.Outside(t, dirs)
	a := kit.Hub(t, outside.Ports)
	h := Start(t, a, Options{Dirs: &dirs, Follow: FastFollow})
	if !slices.Equal(h.Ports, outside.Ports) {
		t.Fatalf("the hub's adapter reported ports %v, want the outside bridge's %v", h.Ports, outside.Ports)
	}
	if st := a.Status(); !slices.Equal(st.Ports, outside.Ports) || !strings.Contains(st.Note, kit.Note) {
		t.Fatalf("status while following = %+v, want ports %v and a note saying %q", st, outside.Ports, kit.Note)
	}
	if !h.Lifecycle.Activity(h.Name).PageEverAttached {
		t.Fatal("following does not hold the idle rules off")
	}

	if err := outside.Stop(); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, "the hub's adapter to serve its own once the outside bridge stopped", func() bool {
		select {
		case <-h.Done():
			t.Fatalf("the hub's adapter stopped instead of taking over: %v", h.Err())
		default:
		}
		st := a.Status()
		return !strings.Contains(st.Note, kit.Note) && len(st.Ports) > 0 && listening(st.Ports)
	})
}

// listening reports whether every port accepts a connection.
func listening(ports []int) bool {
	for _, p := range ports {
		c, err := net.DialTimeout("tcp4", net.JoinHostPort(hub.LoopbackHost, strconv.Itoa(p)), time.Second)
		if err != nil {
			return false
		}
		c.Close()
	}
	return true
}

// A hub and a standalone started together: the hub's adapter can find
// what the bridge holds taken before the file naming the holder exists.
// Failing then stopped the whole hub, and taking another port made a
// second bridge no page reaches. It waits a moment for the holder, and
// serves once what it holds comes free meanwhile.
func waitsForOneStarting(t *testing.T, kit FollowKit) {
	dirs := TempDirs(t)
	ports, release := kit.Hold(t, dirs)
	defer release()
	bg := ServeInBackground(kit.Hub(t, ports), adapters.Env{Dirs: dirs, Follow: FastFollow})
	defer bg.Stop()
	WaitFor(t, "Serve to wait for the holder", func() bool {
		select {
		case p := <-bg.Ready:
			t.Fatalf("ready on %v beside a bridge that is starting", p)
		case <-bg.Done:
			t.Fatalf("Serve gave up on a bridge that is starting: %v", bg.Err())
		default:
		}
		return strings.Contains(bg.Logs.String(), "waiting for")
	})
	release()
	bg.AwaitReady(t, "the adapter to serve once what it holds came free")
}

// Stopped while it waits, the adapter binds nothing and returns nil.
func stoppedWhileWaiting(t *testing.T, kit FollowKit) {
	dirs := TempDirs(t)
	ports, release := kit.Hold(t, dirs)
	defer release()
	bg := ServeInBackground(kit.Hub(t, ports), adapters.Env{Dirs: dirs, Follow: FastFollow})
	WaitFor(t, "Serve to wait for the holder", func() bool { return strings.Contains(bg.Logs.String(), "waiting for") })
	bg.Stop()
	if err := bg.Err(); err != nil {
		t.Fatalf("Serve stopped while waiting = %v, want nil", err)
	}
	select {
	case p := <-bg.Ready:
		t.Fatalf("ready on %v while stopping", p)
	default:
	}
}
