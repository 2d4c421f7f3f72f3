package control

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/geturl/companion/extension"
	"github.com/hubdev/hub/hub"
)

// runGeturl runs `hub geturl ARGS…` through the real command tree (no
// running hub: export needs none) and returns stdout, stderr and the error.
func runGeturl(t *testing.T, argv ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	app := &cli.App{Name: "hub", Writer: &out, ErrWriter: &errb,
		Commands: []*cli.Command{Command(&cli.Command{Name: "serve"})}, ExitErrHandler: func(*cli.Context, error) {}}
	err := app.Run(append([]string{"hub", "geturl"}, argv...))
	return out.String(), errb.String(), err
}

func TestCompanionExport(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "companion")

	out, errOut, err := runGeturl(t, "companion", "export", dir)
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	if !strings.Contains(out, dir) || !strings.Contains(errOut, "Load unpacked") {
		t.Fatalf("export said %q / %q", out, errOut)
	}
	for _, n := range extension.Names() {
		want, _ := fs.ReadFile(extension.FS(), n)
		if got, err := os.ReadFile(filepath.Join(dir, n)); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s not exported as embedded: %v", n, err)
		}
	}

	// Again over the previous export, with --json: one JSON value on
	// stdout, nothing else.
	out, _, err = runGeturl(t, "companion", "export", "--json", dir)
	if err != nil {
		t.Fatalf("export over a previous export: %v", err)
	}
	var ans struct {
		Dir   string   `json:"dir"`
		Files []string `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &ans); err != nil || ans.Dir != dir || !slices.Equal(ans.Files, extension.Names()) {
		t.Fatalf("--json printed %q (%v)", out, err)
	}

	// A directory holding something else is refused (exit 1, JSON error on
	// stdout with --json), and left alone.
	other := filepath.Join(base, "other")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644)
	out, _, err = runGeturl(t, "companion", "export", other, "--json")
	if err == nil || hub.ExitCode(err) != hub.ExitFailed || !strings.Contains(err.Error(), "notes.txt") {
		t.Fatalf("export into a foreign directory: %v", err)
	}
	var fail struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if json.Unmarshal([]byte(out), &fail) != nil || fail.OK || fail.Error != "failed" {
		t.Fatalf("--json refusal printed %q", out)
	}
	if ents, _ := os.ReadDir(other); len(ents) != 1 {
		t.Fatalf("a refused export wrote into the directory: %d entries", len(ents))
	}

	// No DIR, or two: usage.
	for _, argv := range [][]string{{"companion", "export"}, {"companion", "export", dir, dir}} {
		if _, _, err := runGeturl(t, argv...); hub.ExitCode(err) != hub.ExitUsage {
			t.Fatalf("%q: %v, want a usage error", argv, err)
		}
	}
}
