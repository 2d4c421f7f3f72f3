package stitchslop

import (
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
