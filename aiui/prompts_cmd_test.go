package aiui

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/hub"
)

// runAiui runs `hub aiui args…` in-process with HOME at home and returns
// its stdout and exit code.
func runAiui(t *testing.T, home string, args ...string) (string, int) {
	t.Helper()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	var out bytes.Buffer
	app := &cli.App{Name: "hub", Commands: []*cli.Command{Command()}, Writer: &out, ErrWriter: &bytes.Buffer{},
		ExitErrHandler: func(*cli.Context, error) {}}
	err := app.Run(append([]string{"hub", "aiui"}, args...))
	return out.String(), hub.ExitCode(err)
}

// TestPromptsWithoutBackendRefusesALinkedStateDir: with no backend, `hub
// aiui prompts` reads (and marks) the record itself. It must check the
// state dir as the backend does, which refuses a symbolic link: the
// record (and the lock and "to" lines it writes) would be someone else's.
func TestPromptsWithoutBackendRefusesALinkedStateDir(t *testing.T) {
	home := t.TempDir()
	elsewhere := t.TempDir()
	os.Chmod(elsewhere, 0o755)
	planted := `{"text":"planted","id":"P1","seq":1,"at":"2026-01-01T00:00:00Z"}` + "\n"
	if err := os.WriteFile(filepath.Join(elsewhere, "prompts.jsonl"), []byte(planted), 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(home, ".local", "state", "hub")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(state, "aiui")); err != nil {
		t.Fatal(err)
	}
	out, code := runAiui(t, home, "prompts")
	if code != hub.ExitFailed || out != "" {
		t.Fatalf("prompts over a linked state dir: exit %d, stdout %q; want exit 1 and nothing", code, out)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "prompts.jsonl.lock")); err == nil {
		t.Fatal("prompts wrote a lock file through the link")
	}

	// a fresh home, nothing recorded yet: nothing to print, exit 0
	if out, code := runAiui(t, t.TempDir(), "prompts"); code != 0 || out != "" {
		t.Fatalf("prompts with no state dir: exit %d, stdout %q", code, out)
	}
}

// TestCommandsRefuseStrayArguments: every `hub aiui` subcommand that takes
// no arguments says so with exit 64 instead of running (mcp started a
// backend and served with any arguments at all).
func TestCommandsRefuseStrayArguments(t *testing.T) {
	for _, cmd := range []string{"serve", "mcp", "prompts", "tools"} {
		if _, code := runAiui(t, t.TempDir(), cmd, "stray"); code != hub.ExitUsage {
			t.Errorf("hub aiui %s stray: exit %d, want %d", cmd, code, hub.ExitUsage)
		}
	}
}
