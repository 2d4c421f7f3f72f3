package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hubdev/hub/hub"
)

// TestCoreCommandsRefuseArguments: a stray argument is a usage error
// (64), not ignored: `hub start hub.yaml` (for --config hub.yaml) used to
// start a hub on the embedded default config. The state dir is left open
// to others so that, were an argument ignored, start and run fail at once
// (exit 1) instead of starting anything.
func TestCoreCommandsRefuseArguments(t *testing.T) {
	home := t.TempDir()
	state := filepath.Join(home, "state")
	if err := os.MkdirAll(filepath.Join(state, "hub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(state, "hub"), 0o777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	for _, args := range [][]string{
		{"run", "hub.yaml"},
		{"start", "hub.yaml"},
		{"stop", "now"},
		{"status", "aiui"},
		{"logs", "20"},
		{"version", "x"},
		{"config", "check", "hub.yaml"},
		{"config", "show", "hub.yaml"},
		{"mcp", "x"},
	} {
		if got := run(append([]string{"hub"}, args...)); got != hub.ExitUsage {
			t.Errorf("hub %v exited %d, want %d", args, got, hub.ExitUsage)
		}
	}
}

// TestStopRefusesNegativeTimeout: `hub stop --timeout -1s` skipped the
// graceful stop and sent SIGTERM at once; a negative wait is a usage error.
func TestStopRefusesNegativeTimeout(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	if got := run([]string{"hub", "stop", "--timeout", "-1s"}); got != hub.ExitUsage {
		t.Errorf("hub stop --timeout -1s exited %d, want %d", got, hub.ExitUsage)
	}
}
