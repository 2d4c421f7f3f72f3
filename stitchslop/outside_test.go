package stitchslop

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// The hub's bridge started while one started outside it serves the origin
// from the same config dir follows that one: it binds nothing, reports
// that bridge's port (so hub status, hub mcp and the shell reach the tab
// there) and arms its token on it; when that bridge stops, it binds its
// own.
func TestHubBridgeFollowsOneStartedOutside(t *testing.T) {
	old := outsideCheck
	outsideCheck = 20 * time.Millisecond
	t.Cleanup(func() { outsideCheck = old })

	outside := startBridge(t, func(o *Options) { o.Token = "" })
	dirs := outside.Dirs
	hubSide := startBridge(t, func(o *Options) { o.FollowOutside = true }, adaptertest.Options{Dirs: &dirs})

	st := hubSide.S.Status()
	if len(st.Ports) != 1 || st.Ports[0] != outside.Port() || !strings.Contains(st.Note, "following the bridge on port") {
		t.Fatalf("status while following: %+v (outside on %d)", st, outside.Port())
	}
	if n := len(scanSessions(outside.configDir()).Live); n != 1 {
		t.Fatalf("%d live bridges, want the outside one only", n)
	}
	if s := mustJSON(t, outside.control("GET", "/status", "").Body); s["tokenArmed"] != true {
		t.Fatalf("the hub's token is not armed on the outside bridge: %v", s)
	}

	if err := outside.Stop(); err != nil {
		t.Fatal(err)
	}
	adaptertest.WaitFor(t, "the hub's own bridge", func() bool {
		st := hubSide.S.Status()
		return len(st.Ports) == 1 && st.Ports[0] != outside.Port() && !strings.Contains(st.Note, "following")
	})
	if live := scanSessions(outside.configDir()).Live; len(live) != 1 || live[0].Port != hubSide.S.Status().Ports[0] {
		t.Fatalf("live bridges after the takeover: %+v", live)
	}
}

// A hub and a standalone bridge started together: one finds 8787 taken
// before the other has written its session file there, and bound 8788, a
// second bridge the tab (which dials 8787 first) never reaches. A bridge
// finding its first port taken with no session file naming it now waits a
// moment for one, and binds that port if it comes free meanwhile.
func TestBridgeWaitsForOneStartingOnItsFirstPort(t *testing.T) {
	defer func(settle, poll time.Duration) { outsideSettle, outsidePoll = settle, poll }(outsideSettle, outsidePoll)
	outsideSettle, outsidePoll = 10*time.Second, 5*time.Millisecond // only a broken test waits this long

	holder, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	first := holder.Addr().(*net.TCPAddr).Port
	spare, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	second := spare.Addr().(*net.TCPAddr).Port
	spare.Close()

	other := startBridge(t, nil) // for an env to borrow
	env := *other.Env
	env.Dirs = adaptertest.TempDirs(t)
	s, err := New(Options{Origin: testOrigin, Ports: []int{first, second}, ConfigDir: "~/.stitchslop", Token: testToken,
		ProbeTimeout: 300 * time.Millisecond, FollowOutside: true})
	if err != nil {
		t.Fatal(err)
	}
	bg := adaptertest.ServeInBackground(s, env)
	defer bg.Stop()

	adaptertest.WaitFor(t, "the bridge to wait for its first port", func() bool {
		select {
		case p := <-bg.Ready:
			t.Fatalf("the bridge bound %v at once, beside whatever is starting on %d", p, first)
		case <-bg.Done:
			t.Fatalf("Serve ended: %v", bg.Err())
		default:
		}
		return strings.Contains(bg.Logs.String(), "waiting for the bridge there")
	})
	holder.Close()
	if p := bg.AwaitReady(t, "the bridge to bind its first port once it came free"); len(p) != 1 || p[0] != first {
		t.Fatalf("ready on %v, want the first port %d", p, first)
	}
}

// Stopped while it waits, the bridge binds nothing.
func TestBridgeStoppedWhileWaitingBindsNothing(t *testing.T) {
	defer func(settle, poll time.Duration) { outsideSettle, outsidePoll = settle, poll }(outsideSettle, outsidePoll)
	outsideSettle, outsidePoll = 10*time.Second, 5*time.Millisecond // only a broken test waits this long
	holder, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	spare, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	second := spare.Addr().(*net.TCPAddr).Port
	spare.Close()
	other := startBridge(t, nil)
	env := *other.Env
	env.Dirs = adaptertest.TempDirs(t)
	logs := &adaptertest.SyncBuffer{}
	env.Log = slog.New(slog.NewTextHandler(logs, nil))
	env.Ready = func(p ...int) { t.Errorf("ready on %v while stopping", p) }
	s, err := New(Options{Origin: testOrigin, Ports: []int{holder.Addr().(*net.TCPAddr).Port, second}, ConfigDir: "~/.stitchslop",
		Token: testToken, ProbeTimeout: 300 * time.Millisecond, FollowOutside: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, &env) }()
	adaptertest.WaitFor(t, "the wait", func() bool { return strings.Contains(logs.String(), "waiting for the bridge there") })
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve stopped while waiting = %v", err)
	}
	if !strings.Contains(logs.String(), "listening") && scanSessions(filepath.Join(env.Dirs.Home, ".stitchslop")).Live == nil {
		return
	}
	t.Fatalf("the bridge bound a port while stopping: %s", logs.String())
}
