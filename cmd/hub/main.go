// Command hub runs, behind one supervisor, the loopback bridges that browser
// tools need to talk to a coding agent, and drives them from a shell.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/aiui"
	"github.com/hubdev/hub/geturl"
	"github.com/hubdev/hub/pixelle"
	"github.com/hubdev/hub/stitchslop"
)

// Exit codes shared by every shell-facing command (Stitch Slop §4.4).
const (
	exitOK         = 0
	exitFailed     = 1
	exitNotRunning = 3
	exitUsage      = 64
)

// registry is the explicit list of adapter kinds this binary knows.
func registry() *adapters.Registry {
	return adapters.NewRegistry(
		stitchslop.Factory(),
		aiui.Factory(),
		pixelle.Factory(),
		geturl.Factory(),
	)
}

func main() { os.Exit(run(os.Args)) }

// run executes the CLI and returns the process exit code.
func run(args []string) int {
	app := newApp()
	err := app.Run(args)
	if err == nil {
		return exitOK
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(os.Stderr, msg)
		}
		return ec.ExitCode()
	}
	fmt.Fprintln(os.Stderr, "hub:", err)
	return exitUsage
}

func newApp() *cli.App {
	return &cli.App{
		Name:                 "hub",
		Usage:                "run and drive the loopback bridges your browser tools use to talk to a coding agent",
		HideVersion:          true,
		EnableBashCompletion: true,
		Writer:               os.Stdout,
		ErrWriter:            os.Stderr,
		ExitErrHandler:       func(*cli.Context, error) {}, // run() prints and exits
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return cli.Exit("hub: "+err.Error()+"\nRun 'hub --help' for usage.", exitUsage)
		},
		Commands: []*cli.Command{
			runCommand(),
			startCommand(),
			stopCommand(),
			statusCommand(),
			logsCommand(),
			configCommand(),
			versionCommand(),
			stitchslop.Command(),
			aiui.Command(),
			pixelle.Command(),
		},
	}
}
