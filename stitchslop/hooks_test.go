package stitchslop

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
)

// The hub's adapter says in its status line where its session files are
// (config_dir, absolute), and the factory's Remote hook reaches it from
// that line alone: no client parses the hub's config to find it.
func TestRemoteHookReachesTheAdapterByItsStatusDir(t *testing.T) {
	f := Factory()
	cfg := NewConfig()
	cfg.Origin, cfg.Ports, cfg.ConfigDir = testOrigin, []int{0}, "~/elsewhere"
	a, err := f.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := adaptertest.Start(t, a, adaptertest.Options{})
	st := a.Status()
	if want := filepath.Join(h.Dirs.Home, "elsewhere"); st.Dir != want {
		t.Fatalf("Status().Dir = %q, want %q", st.Dir, want)
	}
	// As the supervisor reports it.
	st.Name, st.State = "stitchslop", adapters.StateRunning
	env := adapters.RemoteEnv{Dirs: h.Dirs}
	for _, tc := range []struct {
		name, dir string
		reached   bool
	}{
		{"the dir it reports", st.Dir, true},
		// A hub that reports none is looked for in the default dir,
		// where this one has no session file.
		{"no dir reported", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := st
			line.Dir = tc.dir
			b, ok := f.Remote(env, line)
			if !ok {
				t.Fatal("no bridge for a running adapter")
			}
			defer b.(*RemoteBridge).Close()
			_, err := b.BridgeTools()
			var te *adapters.ToolError
			switch {
			case tc.reached && !errors.Is(err, adapters.ErrNoPage):
				t.Fatalf("BridgeTools = %v, want the bridge's own no-page answer", err)
			case !tc.reached && (!errors.As(err, &te) || te.Code != adapters.CodeNotRunning):
				t.Fatalf("BridgeTools = %v, want %s", err, adapters.CodeNotRunning)
			}
		})
	}
}
