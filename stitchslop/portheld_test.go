package stitchslop

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub/portowner/portownertest"
)

// With another user (nobody) holding the first port of the list, the
// bridge does not take a later one: the tab dials the first port first and
// would hand that user its credential. Serve fails, naming the port, the
// owner and what to do; it never reports ready. The hub's adapter
// (FollowOutside) does not first wait for a bridge of ours to show up on
// that port either.
func TestBridgeRefusesPortOfAnotherUser(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("owners are read from the Linux socket table")
	}
	for _, follow := range []bool{false, true} {
		t.Run(fmt.Sprintf("FollowOutside=%v", follow), func(t *testing.T) {
			sq := portownertest.Start(t, "127.0.0.1:0")
			other := startBridge(t, nil) // for an env to borrow
			env := *other.Env
			env.Dirs = adaptertest.TempDirs(t)
			s, err := New(&Config{Origin: testOrigin, Ports: []int{sq.Port, 0}, ConfigDir: "~/.stitchslop", Token: testToken,
				Limits: Limits{ProbeTimeout: 300 * time.Millisecond}, FollowOutside: follow})
			if err != nil {
				t.Fatal(err)
			}
			bg := adaptertest.ServeInBackground(s, env)
			defer bg.Stop()
			select {
			case p := <-bg.Ready:
				t.Fatalf("ready on %v, past nobody's port %d", p, sq.Port)
			case <-bg.Done:
			}
			err = bg.Err()
			for _, want := range []string{
				fmt.Sprintf("127.0.0.1:%d is held by another user (uid %d (nobody)", sq.Port, sq.UID),
				"the Stitch Slop tab dials", "will not take a later port", "free it and start again", "--port", "adapters.stitchslop.ports",
			} {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("Serve = %v; want it to say %q", err, want)
				}
			}
			if st := s.Status(); len(st.Ports) != 0 {
				t.Fatalf("status reports ports %v", st.Ports)
			}
			if logs := bg.Logs.String(); strings.Contains(logs, "waiting for the bridge there") {
				t.Fatalf("waited for a bridge of ours on nobody's port: %s", logs)
			}
		})
	}
}

// A first port held by a process of our own (a stale bridge) is walked
// past as the spec says, and the status note says which port was taken
// and who holds the one the tab dials first.
func TestStatusNotesSkippedOwnPort(t *testing.T) {
	held, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	first := held.Addr().(*net.TCPAddr).Port
	b := startBridge(t, func(o *Config) { o.Ports = []int{first, 0} })
	note := b.S.Status().Note
	want := fmt.Sprintf("took port %d because %d is held by pid %d", b.Port(), first, os.Getpid())
	if runtime.GOOS != "linux" {
		want = fmt.Sprintf("took port %d because %d is in use and this system cannot say by whom", b.Port(), first)
	}
	if !strings.Contains(note, want) || !strings.Contains(note, "the tab dials those first") {
		t.Fatalf("note = %q, want it to say %q", note, want)
	}
}
