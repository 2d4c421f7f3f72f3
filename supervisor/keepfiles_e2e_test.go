package supervisor_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/aiui"
	"github.com/hubdev/hub/geturl"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/pixelle"
	"github.com/hubdev/hub/stitchslop"
	"github.com/hubdev/hub/supervisor"
)

// TestEveryAdapterKeepsItsFilesOnTheHubsOneKeeper is issue 31's idle hub:
// with all four adapters running, every file they keep (stitchslop's
// session file, aiui's registry record and control file, geturl's control
// file) is registered on the one FileKeeper the hub hands them, so an idle
// hub wakes once per period for all of them instead of once per adapter
// every 2 s; and each file deleted is still put back by that keeper.
func TestEveryAdapterKeepsItsFilesOnTheHubsOneKeeper(t *testing.T) {
	dirs := adaptertest.TempDirs(t)
	yaml := "lifecycle:\n  no_page_minutes: 0\n  agent_idle_minutes: 0\nadapters:\n" +
		"  stitchslop:\n    origin: " + ssOrigin + "\n    ports: [0]\n    config_dir: ~/.stitchslop\n" +
		"  aiui:\n    port: 0\n" +
		"  pixelle:\n    website: " + pxWebsite + "\n    port: 0\n" +
		"  geturl:\n    port: 0\n    control_port: 0\n    opencode:\n      enabled: false\n"
	path := filepath.Join(t.TempDir(), "hub.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := adapters.NewRegistry(stitchslop.Factory(), aiui.Factory(), pixelle.Factory(), geturl.Factory())
	cfg, err := supervisor.LoadConfig(path, reg)
	if err != nil {
		t.Fatal(err)
	}
	// A short period: the test waits for the keeper's rounds, it does not
	// time them.
	files := hub.NewFileKeeper(20 * time.Millisecond)
	sup, err := supervisor.New(supervisor.Options{Config: cfg, Dirs: dirs, Log: adaptertest.Logger(t), Files: files})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	keeping := make(chan struct{})
	go func() { defer close(keeping); files.Run(ctx) }()
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- sup.Serve(ctx, func([]adapters.Status) { close(ready) }) }()
	defer func() {
		cancel()
		<-keeping
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("hub: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the hub did not stop")
		}
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("the hub did not start: %v", err)
	}
	// The keepers register right after their adapter's Ready.
	adaptertest.WaitFor(t, "four kept files", func() bool { return files.Kept() == 4 })

	port := func(name string) int {
		for _, a := range sup.Status() {
			if a.Name == name && len(a.Ports) > 0 {
				return a.Ports[0]
			}
		}
		t.Fatalf("%s has no port", name)
		return 0
	}
	kept := []string{
		filepath.Join(dirs.Home, ".stitchslop", fmt.Sprintf("session-%d.json", port("stitchslop"))),
		filepath.Join(aiui.RegistryDir(dirs), strconv.Itoa(os.Getpid())+".json"),
		aiui.ControlPath(dirs),
		filepath.Join(geturl.StateDir(dirs), "control.json"),
	}
	for _, p := range kept {
		if err := os.Remove(p); err != nil {
			t.Fatalf("removing a kept file: %v", err)
		}
	}
	for _, p := range kept {
		adaptertest.WaitFor(t, p+" put back", func() bool { _, err := os.Stat(p); return err == nil })
	}
	if n := files.Kept(); n != 4 {
		t.Errorf("kept files = %d, want 4", n)
	}
}
