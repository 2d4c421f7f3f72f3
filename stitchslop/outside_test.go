package stitchslop

import (
	"net"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

// The hub's bridge beside one started outside it that serves the origin
// from the same config dir follows that one (the shared policy), and takes
// over when it stops. A raw listener on the first port with no session
// file naming it is a bridge starting there (it binds a moment before it
// writes the file).
func TestFollow(t *testing.T) {
	adaptertest.TestFollow(t, adaptertest.FollowKit{
		Outside: func(t *testing.T, dirs hub.Dirs) *adaptertest.Harness {
			return startBridge(t, func(o *Config) { o.Token = "" }, adaptertest.Options{Dirs: &dirs}).Harness
		},
		Hub: func(t *testing.T, ports []int) adapters.Adapter {
			s, err := New(&Config{Origin: testOrigin, Ports: ports, ConfigDir: "~/.stitchslop", Token: testToken,
				Limits: Limits{ProbeTimeout: 300 * time.Millisecond}, FollowOutside: true})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		Hold: func(t *testing.T, _ hub.Dirs) ([]int, func()) {
			holder := listenAny(t)
			spare := listenAny(t)
			spare.Close()
			return []int{port(holder), port(spare)}, func() { holder.Close() }
		},
		Note: "following the bridge on port",
	})
}

// Following, the hub's bridge arms its token on the bridge it follows, so
// the tab pairs with whichever bridge it reaches.
func TestFollowerArmsItsToken(t *testing.T) {
	outside := startBridge(t, func(o *Config) { o.Token = "" })
	dirs := outside.Dirs
	startBridge(t, func(o *Config) { o.FollowOutside = true }, adaptertest.Options{Dirs: &dirs, Follow: adaptertest.FastFollow})
	if s := mustJSON(t, outside.control("GET", "/status", "").Body); s["tokenArmed"] != true {
		t.Fatalf("the hub's token is not armed on the outside bridge: %v", s)
	}
	if n := len(scanSessions(outside.configDir()).Live); n != 1 {
		t.Fatalf("%d live bridges, want the outside one only", n)
	}
}

func listenAny(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func port(ln net.Listener) int { return ln.Addr().(*net.TCPAddr).Port }
