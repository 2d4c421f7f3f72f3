package bridges

import (
	"testing"

	"github.com/hubdev/hub/adapters"
)

// stateHub is a hub that can say one adapter's state, and counts the
// whole-hub status snapshots it was asked for.
type stateHub struct {
	hub
	snapshots int
}

func (h *stateHub) Status() []adapters.Status { h.snapshots++; return h.hub.Status() }

func (h *stateHub) State(name string) (adapters.State, bool) {
	if name == "tab" {
		return h.state, true
	}
	return "", false
}

// Present runs on every /k call: in a hub it must ask for its own
// adapter's state, not for every adapter's status line, which reads the
// pairing file, searches PATH for cloudflared and more (a third of a /k
// read's CPU went there).
func TestPresentAsksOnlyForItsState(t *testing.T) {
	for _, tc := range []struct {
		state adapters.State
		want  bool
	}{{adapters.StateRunning, true}, {adapters.StateRestarting, true}, {adapters.StateDisabled, false}, {adapters.StateNotImplemented, false}} {
		h := &stateHub{hub: hub{state: tc.state}}
		p := New("tab", "a tab", func() adapters.HubView { return h })
		if got := p.Present(); got != tc.want {
			t.Errorf("%s: Present = %v, want %v", tc.state, got, tc.want)
		}
		if h.snapshots != 0 {
			t.Errorf("%s: Present took %d status snapshots of the whole hub, want 0", tc.state, h.snapshots)
		}
	}
	// An adapter the hub does not run is not there.
	h := &stateHub{hub: hub{state: adapters.StateRunning}}
	if New("other-name", "", func() adapters.HubView { return h }).Present() {
		t.Error("an adapter the hub does not have is present")
	}
}
