// Command hub runs, behind one supervisor, the loopback bridges that browser
// tools need to talk to a coding agent, and drives them from a shell.
//
// It knows the bridges only through the registry (registry.New): their
// command groups, given a CommandEnv (the running hub, its bridges through
// their Remote hooks), and `hub mcp`'s faces; it imports no bridge package.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/registry"
)

func main() { os.Exit(hubMain(os.Args)) }

// hubMain is the process's entry point: before anything reads or makes a
// secret, the process becomes undumpable, so that no other process of the
// user, the commands its terminal runs included, can read its memory or
// environment; then it runs the CLI. Every command does this, as any of
// them may hold secrets (a hub, a bridge, an MCP face, the key of the
// control endpoint it calls). Every command also takes the hub's default
// GOMAXPROCS before it starts a goroutine: the standalone bridges
// (`hub pixelle serve`, ...) serve as `hub run` does, and `hub run`
// applies runtime.max_procs once it has read its config.
func hubMain(args []string) int {
	if err := hub.MakeUndumpable(); err != nil {
		fmt.Fprintln(os.Stderr, "hub: warning: other processes of this user can read this one's memory:", err)
	}
	setMaxProcs(0)
	return run(args)
}

// run executes the CLI and returns the process exit code.
func run(args []string) int {
	err := newApp().Run(args)
	if err == nil {
		return hub.ExitOK
	}
	// urfave/cli's help command answers an unknown topic ("hub help nosuch",
	// at any level) with exit 3, the code for "nothing running".
	if topic, ok := strings.CutPrefix(err.Error(), "No help topic for "); ok {
		fmt.Fprintln(os.Stderr, "hub: no help for unknown command "+topic)
		return hub.ExitUsage
	}
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(os.Stderr, msg)
		}
		return hub.ExitCode(err)
	}
	// Errors without a code come from urfave/cli's own argument parsing.
	fmt.Fprintln(os.Stderr, "hub:", err)
	return hub.ExitUsage
}

// newApp is the CLI: the core commands and, from the registry, each
// bridge's command group, given what it needs of this binary explicitly
// (commandEnv).
func newApp() *cli.App {
	reg := registry.New()
	core := []*cli.Command{
		runCommand(),
		startCommand(),
		stopCommand(),
		statusCommand(),
		logsCommand(),
		configCommand(),
		versionCommand(),
		mcpCommand(reg),
		autostartCommand(),
		completionCommand(),
		manCommand(),
	}
	for _, c := range core {
		refuseArgs(c)
	}
	app := &cli.App{
		Name:                 "hub",
		Usage:                "run and drive the loopback bridges your browser tools use to talk to a coding agent",
		Version:              thisBuild().String(), // hub --version, -v; hub version
		EnableBashCompletion: true,
		Writer:               os.Stdout,
		ErrWriter:            os.Stderr,
		ExitErrHandler:       func(*cli.Context, error) {}, // run() prints and exits
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			name := "hub"
			if c.Command != nil && c.Command.HelpName != "" {
				name = c.Command.HelpName
			}
			return hub.Exit(hub.ExitUsage, name+": "+flagError(err)+"\nRun '"+name+" --help' for usage.")
		},
		Commands: append(core, reg.Commands(commandEnv(reg))...),
	}
	app.Action = unknownCommand(cli.ShowAppHelp)
	for _, c := range app.Commands {
		quietUsageErrors(c, app.OnUsageError)
	}
	return app
}

// unknownCommand is the action of a command group: called bare, a usage
// error (exit 64) with its help on stderr (stdout may be a pipe that wants
// output); a name it does not have is one too, where urfave/cli would
// print "No help topic" and exit 3, the code for "nothing running".
// `--help` still prints the help on stdout and exits 0.
func unknownCommand(help cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		if !c.Args().Present() {
			w := c.App.Writer
			c.App.Writer = c.App.ErrWriter
			help(c)
			c.App.Writer = w
			return hub.Exit(hub.ExitUsage, "")
		}
		name := c.App.Name
		if c.Command != nil && c.Command.HelpName != "" {
			name = c.Command.HelpName
		}
		return hub.Exit(hub.ExitUsage, fmt.Sprintf("%s: unknown command %q\nRun '%s --help' for usage.", name, c.Args().First(), name))
	}
}

// quietUsageErrors makes a flag error or an unknown subcommand in any
// command a one-line message on stderr with exit 64, instead of the
// command's help on stdout: stdout belongs to JSON output, even when the
// caller got the flags wrong.
func quietUsageErrors(c *cli.Command, handler cli.OnUsageErrorFunc) {
	if c.OnUsageError == nil {
		c.OnUsageError = handler
	}
	if c.Action == nil && len(c.Subcommands) > 0 {
		c.Action = unknownCommand(cli.ShowSubcommandHelp)
	}
	for _, sub := range c.Subcommands {
		quietUsageErrors(sub, handler)
	}
}
