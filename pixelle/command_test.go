package pixelle

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
)

// runCLI runs `hub pixelle args...` and returns stdout and the exit error.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	app := &cli.App{Name: "hub", Commands: []*cli.Command{Command(adapters.CommandEnv{})}, Writer: &out, ErrWriter: &errOut,
		ExitErrHandler: func(*cli.Context, error) {}}
	err := app.Run(append([]string{"hub", "pixelle"}, args...))
	return out.String(), err
}

// Flags may follow the arguments, through the shared hub.Interspersed; its
// usage errors keep pixelle's shape: a JSON error object on stdout, exit 64.
func TestFlagsAfterArguments(t *testing.T) {
	t.Setenv("PIXELLE_RELAY", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	out, err := runCLI(t, "pair", "ABCDEF012345", "--relay")
	var ce ClientError
	if hub.ExitCode(err) != hub.ExitUsage || json.Unmarshal([]byte(out), &ce) != nil || ce.Code != "USAGE" || ce.Message != "flag --relay needs a value" {
		t.Fatalf("a flag without its value: exit %d, stdout %q", hub.ExitCode(err), out)
	}
	// --relay after the code is applied: a non-loopback relay is refused
	// before anything is dialled.
	out, err = runCLI(t, "pair", "ABCDEF012345", "--relay", "http://example.com:4317")
	if hub.ExitCode(err) != hub.ExitUsage || !bytes.Contains([]byte(out), []byte("loopback")) {
		t.Fatalf("--relay after the code: exit %d, stdout %q", hub.ExitCode(err), out)
	}
	out, err = runCLI(t, "pair", "ABCDEF012345", "--relay=http://example.com:4317")
	if hub.ExitCode(err) != hub.ExitUsage || !bytes.Contains([]byte(out), []byte("loopback")) {
		t.Fatalf("--relay=: exit %d, stdout %q", hub.ExitCode(err), out)
	}
}
