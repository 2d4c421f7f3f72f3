package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hubdev/hub/supervisor"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain makes the test binary double as the `hub` command inside
// testscript scripts, so scripts run the real CLI end to end.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"hub": func() { os.Exit(hubMain(os.Args)) },
	})
}

// scriptParams are the shared testscript settings: a private HOME with XDG
// directories inside it, so scripts never touch the real user's files.
// Adapter script tests call it with their own testdata folder and add
// their commands to Cmds.
func scriptParams(dir string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		Cmds:                scriptCmds(),
		Condition:           portFree,
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, "home")
			if err := os.MkdirAll(home, 0o700); err != nil {
				return err
			}
			env.Setenv("HOME", home)
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
			env.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
			env.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
			env.Setenv("NO_COLOR", "1")
			// A script that fails between `hub start` and `hub stop`
			// must not leave its hub running.
			state := filepath.Join(home, ".local", "state", "hub")
			env.Defer(func() {
				if st, err := supervisor.ReadState(state); err == nil && supervisor.VerifyHub(state, st.PID) == nil {
					if p, err := os.FindProcess(st.PID); err == nil {
						p.Kill()
					}
				}
			})
			return nil
		},
	}
}

func TestStopTimeout(t *testing.T) {
	cases := []struct {
		flag     time.Duration
		set      bool
		shutdown int
		want     time.Duration
	}{
		{15 * time.Second, false, 10, 15 * time.Second}, // the default config
		{15 * time.Second, false, 60, 65 * time.Second}, // a longer shutdown deadline
		{15 * time.Second, false, 0, 15 * time.Second},  // a hub.json from before the field
		{3 * time.Second, true, 60, 3 * time.Second},    // --timeout wins
	}
	for _, tc := range cases {
		if got := stopTimeout(tc.flag, tc.set, tc.shutdown); got != tc.want {
			t.Errorf("stopTimeout(%v, %v, %d) = %v, want %v", tc.flag, tc.set, tc.shutdown, got, tc.want)
		}
	}
}
