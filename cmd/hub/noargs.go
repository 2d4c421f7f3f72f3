package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/hub"
)

// refuseArgs makes a positional argument to c, or to any of its
// subcommands that declares no ArgsUsage, a usage error (exit 64). These
// commands take none, and one ignored silently ran something else than
// the user meant: `hub start hub.yaml` (for --config hub.yaml) started a
// hub on the embedded default config.
func refuseArgs(c *cli.Command) {
	for _, sub := range c.Subcommands {
		refuseArgs(sub)
	}
	if c.Action == nil || c.ArgsUsage != "" {
		return
	}
	action := c.Action
	c.Action = func(ctx *cli.Context) error {
		if ctx.Args().Present() {
			name := ctx.Command.HelpName
			return hub.Exit(hub.ExitUsage, fmt.Sprintf("%s: unexpected argument %q\nRun '%s --help' for usage.", name, ctx.Args().First(), name))
		}
		return action(ctx)
	}
}
