package discover

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

// A version probe must not start in a directory other users can write, or
// under one: launchers read config from their working directory and its
// parents (rustup's rust-toolchain.toml can name a toolchain path whose
// cargo it then runs, yarn's .yarnrc a yarn-path), so a file planted in
// /tmp would run as the hub's user on any read-only agent's /p.
func TestProbeRunsInRoot(t *testing.T) {
	bin := t.TempDir()
	out := filepath.Join(t.TempDir(), "cwd")
	script := "#!/bin/sh\npwd > '" + out + "'\necho 'cargo 1.80.0'\n"
	if err := os.WriteFile(filepath.Join(bin, "cargo"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", t.TempDir()) // os.TempDir(), as a world-writable /tmp would be
	scope, _ := sandbox.New(t.TempDir())
	d := &Discoverer{Scope: scope, Timeout: time.Minute, Tools: []string{"cargo"},
		LookPath: func(string) (string, error) { return filepath.Join(bin, "cargo"), nil }}
	p := d.Discover(context.Background())
	if len(p.Tools) != 1 || p.Tools[0].Version != "1.80.0" {
		t.Fatalf("tools = %+v", p.Tools)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if cwd := strings.TrimSpace(string(b)); cwd != "/" {
		t.Errorf("probe ran in %s, want /", cwd)
	}
}
