package stitchslop

import (
	"bytes"
	"errors"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/hub"
)

// A command name or JSON-ARGS that is not UTF-8 cannot be sent as it was
// typed: encoding it would replace the bad bytes with U+FFFD and run a
// command the caller never named. It is a usage error (§4.4: 64), caught
// before any bridge is looked for.
func TestCallRefusesInvalidUTF8(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, args := range [][]string{
		{"call", "ren\xffder"},
		{"call", "render", "{\"a\":\"\xff\"}"},
	} {
		var stdout, stderr bytes.Buffer
		app := &cli.App{Name: "hub", Commands: []*cli.Command{Command()}, Writer: &stdout, ErrWriter: &stderr,
			ExitErrHandler: func(*cli.Context, error) {}}
		err := app.Run(append([]string{"hub", "stitchslop"}, args...))
		var ec cli.ExitCoder
		if !errors.As(err, &ec) || ec.ExitCode() != hub.ExitUsage {
			t.Fatalf("%q: err = %v, want exit %d", args, err, hub.ExitUsage)
		}
		if stdout.Len() != 0 {
			t.Fatalf("%q: stdout carried %q", args, stdout.String())
		}
	}
}
