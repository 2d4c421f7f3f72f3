package hubmcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/supervisor"
)

// While no hub runs the face looks again every Retry; a look that finds
// what the last one found changes no tool and must not tell the client
// that the list changed (it used to, once a second, for as long as no hub
// ran, and every one sends the client back to tools/list).
func TestNoHubSendsNoListChangedPerLook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dirs := adaptertest.TempDirs(t)
		s := runFace(t, Options{Dirs: dirs, Retry: time.Second})
		if got := s.tools(); got != "hub_status" {
			t.Fatalf("tools = %s, want hub_status only", got)
		}
		time.Sleep(2 * time.Second) // the first look's changes are out
		synctest.Wait()
		s.DropNotes()
		time.Sleep(10 * time.Second) // ten more looks
		synctest.Wait()
		if m, err := s.Note("notifications/tools/list_changed", 0); err == nil {
			t.Fatalf("list_changed with no change while no hub runs: %v", m)
		}
		if st := s.tool("hub_status", nil).Text; !strings.Contains(st, "no hub is running") {
			t.Fatalf("hub_status:\n%s", st)
		}
	})
}

// A hub this face could not start (a bad config, say) is explained once,
// with the error, in hub_status: not "starting one failed" twice.
func TestHubStatusSaysOnceWhyStartingFailed(t *testing.T) {
	dirs := adaptertest.TempDirs(t)
	s := runFace(t, Options{Dirs: dirs, StartHub: func(context.Context) error {
		return errors.New(`hub.yaml:3: unknown key "adapters.pixelle.websit"`)
	}})
	var st string
	eventually(t, "the start failure in hub_status", func() bool {
		st = s.tool("hub_status", nil).Text
		return strings.Contains(st, "websit")
	})
	var rep statusReport
	if err := json.Unmarshal([]byte(st), &rep); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(rep.Hub.Message, "starting one failed"); n != 1 {
		t.Fatalf("hub message says it %d times: %s", n, rep.Hub.Message)
	}
}

// A hub that stops removes its state file before it lets go of its lock,
// so for a moment the face sees "a hub is starting", and a look later "no
// hub is running": the reason changes, the tools (none of the bridges')
// do not, and the client must not be sent to tools/list for it (it was,
// about a second after every `hub stop`).
func TestNoListChangedWhenOnlyTheReasonChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dirs := adaptertest.TempDirs(t)
		s := runFace(t, Options{Dirs: dirs, Retry: time.Second})
		time.Sleep(2 * time.Second) // the first look's changes are out
		synctest.Wait()
		s.DropNotes()
		lock, err := supervisor.AcquireLock(dirs.State) // a hub stopping: lock, no state file
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if st := s.tool("hub_status", nil).Text; !strings.Contains(st, startingWhy) {
			t.Fatalf("hub_status while the lock is held:\n%s", st)
		}
		lock.Release()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if m, err := s.Note("notifications/tools/list_changed", 0); err == nil {
			t.Fatalf("list_changed though no tool changed: %v", m)
		}
		if got := s.tools(); got != "hub_status" {
			t.Fatalf("tools = %s, want hub_status only", got)
		}
		if st := s.tool("stitchslop_wait_for_connection", nil).Text; !strings.Contains(st, "no hub is running") {
			t.Fatalf("the stitchslop reason did not follow:\n%s", st)
		}
	})
}
