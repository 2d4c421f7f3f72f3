package main

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// Every flag's --help line says what it defaults to, that leaving it out
// leaves a setting unchanged, or that it is required: a user never has to
// guess what a flag they did not pass does.
func TestEveryFlagStatesItsDefault(t *testing.T) {
	app := newApp()
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := path + " " + c.Name
			for _, f := range c.Flags {
				if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
					continue
				}
				line := f.String()
				if strings.Contains(line, "help, h") || strings.HasPrefix(strings.TrimSpace(line), "--help") {
					continue
				}
				if !strings.Contains(line, "default") && !strings.Contains(line, "left unchanged") && !strings.Contains(line, "(required)") {
					t.Errorf("%s: %s", p, line)
				}
			}
			walk(p, c.Subcommands)
		}
	}
	walk("hub", app.Commands)
}
