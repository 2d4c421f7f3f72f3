package pixelle

import (
	"errors"
	"testing"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
)

// The factory's Remote hook drives the relay on the port the hub reports,
// with the credential store of the dirs it is given: with no pairing
// stored, pair is all it lists; a relay that is gone is not running.
func TestRemoteHookDrivesTheRelayOnItsPort(t *testing.T) {
	f := Factory()
	cfg := NewConfig()
	cfg.Website, cfg.Port = website, 0
	a, err := f.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := adaptertest.Start(t, a, adaptertest.Options{})
	st := a.Status()
	st.Name, st.State = "pixelle", adapters.StateRunning
	b, ok := f.Remote(adapters.RemoteEnv{Dirs: h.Dirs}, st)
	if !ok {
		t.Fatal("no bridge for a running relay")
	}
	tools, err := b.BridgeTools()
	if err != nil || len(tools) != 1 || tools[0].Name != toolPair {
		t.Fatalf("BridgeTools = %+v, %v; want pair alone", tools, err)
	}
	h.Stop()
	_, err = b.BridgeTools()
	var te *adapters.ToolError
	if !errors.As(err, &te) || te.Code != adapters.CodeNotRunning {
		t.Fatalf("BridgeTools of a stopped relay = %v", err)
	}
}
