package hubmcp

import (
	"runtime"
	"strings"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// stitchslop_wait_for_connection waiting while the hub stops (and none
// comes back in time) must say the bridge went, not send the user to
// check the browser's "Allow agent connections" switch for a tab that
// had nothing to attach to.
func TestWaitSaysTheBridgeWentWhenTheHubStops(t *testing.T) {
	dirs := adaptertest.TempDirs(t)
	h := startHub(t, dirs, hubConfig(t, "stitchslop"))
	s := runFace(t, Options{Dirs: dirs})
	eventually(t, "the wait tool", func() bool { return strings.Contains(s.tools(), "stitchslop_wait_for_connection") })

	type answer struct {
		res adaptertest.ToolResult
		err error
	}
	got := make(chan answer, 1)
	go func() {
		res, err := s.Tool("stitchslop_wait_for_connection", map[string]any{"timeoutSeconds": 2}, wait)
		got <- answer{res, err}
	}()
	// The wait is under way (not refused up front for want of a bridge).
	buf := make([]byte, 1<<20)
	eventually(t, "the wait under way", func() bool {
		n := runtime.Stack(buf, true)
		return strings.Contains(string(buf[:n]), "(*switchBridge).waitAttached")
	})
	h.stop()
	a := <-got
	if a.err != nil {
		t.Fatal(a.err)
	}
	if !a.res.IsError || strings.Contains(a.res.Text, "Allow agent connections") || !strings.Contains(a.res.Text, "stopped") {
		t.Fatalf("wait across a hub stop = %q (isError %v)", a.res.Text, a.res.IsError)
	}
}
