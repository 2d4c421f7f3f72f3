package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/supervisor"
)

// TestStartWithARelativeHome: the detached hub runs in /, so a relative
// HOME must mean the same directory to it as to the `hub start` (and the
// `hub status`) that the user ran; it used to put its state under
// /<HOME>, where nothing found it.
func TestStartWithARelativeHome(t *testing.T) {
	hubBin, err := exec.LookPath("hub")
	if err != nil {
		t.Skip("no hub command in PATH")
	}
	cwd := t.TempDir()
	rel := "home-" + hub.RandomHex(6)
	home := filepath.Join(cwd, rel)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(home, "hub.yaml")
	if err := os.WriteFile(cfg, []byte("adapters:\n  stitchslop: {enabled: false}\n  geturl: {enabled: false}\n  pixelle: {enabled: false}\n  aiui: {port: 0}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hubIn := func(homeEnv string, args ...string) ([]byte, error) {
		cmd := exec.Command(hubBin, args...)
		cmd.Dir = cwd
		cmd.Env = append(os.Environ(), "HOME="+homeEnv, "XDG_CONFIG_HOME=", "XDG_STATE_HOME=", "XDG_CACHE_HOME=", "NO_COLOR=1")
		return cmd.CombinedOutput()
	}
	t.Cleanup(func() {
		hubIn(home, "stop")
		if _, err := os.Stat("/" + rel); err == nil { // where the hub wrongly went
			hubIn("/"+rel, "stop")
			os.RemoveAll("/" + rel)
		}
	})
	if out, err := hubIn(rel, "start", "--config", cfg); err != nil {
		t.Fatalf("hub start: %v\n%s", err, out)
	}
	if _, err := supervisor.ReadState(filepath.Join(home, ".local", "state", "hub")); err != nil {
		t.Fatalf("no state file under the HOME the caller meant: %v", err)
	}
	if out, err := hubIn(rel, "status"); err != nil {
		t.Fatalf("hub status with the same relative HOME: %v\n%s", err, out)
	}
}
