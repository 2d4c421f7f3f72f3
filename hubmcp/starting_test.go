package hubmcp

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/supervisor"
)

// A hub that is starting (its lock held, its state file not written yet:
// another hub mcp won the race to start one) is waited for, not started a
// second time and not reported as a failed start.
func TestAHubThatIsStartingIsWaitedFor(t *testing.T) {
	dirs := adaptertest.TempDirs(t)
	cfg := hubConfig(t, "stitchslop")
	lock, err := supervisor.AcquireLock(dirs.State)
	if err != nil {
		t.Fatal(err)
	}
	var starts atomic.Int32
	s := runFace(t, Options{Dirs: dirs, FirstLook: 50 * time.Millisecond, StartHub: func(context.Context) error {
		starts.Add(1)
		return nil
	}})
	if st := s.tool("hub_status", nil).Text; strings.Contains(st, "failed") || !strings.Contains(st, "starting") {
		t.Errorf("hub_status while a hub starts:\n%s", st)
	}
	startHubLocked(t, dirs, cfg, lock)
	eventually(t, "the hub's tools", func() bool { return s.tools() == "hub_status,"+stitchOwnTools })
	if n := starts.Load(); n != 0 {
		t.Fatalf("started %d hubs beside the one starting", n)
	}
}
