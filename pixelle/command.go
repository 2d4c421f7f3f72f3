package pixelle

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
)

// Command is the `hub pixelle` command group: the standalone relay and the
// agent command client. Client commands print JSON on stdout (the result,
// or an error object {"code","message",...}) and human text on stderr; they
// exit 0 ok, 1 error result, 3 relay not reachable, 64 usage.
func Command(env adapters.CommandEnv) *cli.Command {
	relayFlag := &cli.StringFlag{Name: "relay", Usage: "relay URL (default: $PIXELLE_RELAY, else the running hub's relay, else the paired relay, else " + DefaultRelay + ")"}
	cmd := &cli.Command{
		Name:  "pixelle",
		Usage: "the Pixelle canvas relay (pixelle-relay/0.2) and its agent command client",
		// Without this, urfave/cli answers an unknown subcommand with exit
		// 3 — which this client reserves for "relay not reachable".
		// urfave/cli's help command answers an unknown topic with exit 3
		// as well; "help [COMMAND]" is handled below instead.
		HideHelpCommand: true,
		Action: func(c *cli.Context) error {
			if c.Args().First() == "help" {
				switch name := c.Args().Get(1); {
				case name == "":
					return cli.ShowSubcommandHelp(c)
				case c.Command.Command(name) != nil:
					return cli.ShowCommandHelp(c, name)
				default:
					return fail(c, usageErr("USAGE", "no help for unknown command %q; use serve, workspace, health, pair, call, state or selection", name))
				}
			}
			if c.Args().Present() {
				return fail(c, usageErr("USAGE", "unknown command %q; use serve, workspace, health, pair, call, state or selection", c.Args().First()))
			}
			return cli.ShowSubcommandHelp(c)
		},
		Subcommands: []*cli.Command{
			{
				Name:      "serve",
				Usage:     "run a standalone relay on 127.0.0.1 (logs on stderr)",
				ArgsUsage: " ",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "website", Usage: "the exact Pixelle origin, e.g. https://pixelle.example (required)"},
					&cli.IntFlag{Name: "port", Value: DefaultPort, Usage: "loopback port (RELAY = http://127.0.0.1:PORT)"},
				},
				Action: func(c *cli.Context) error { return serveAction(c, env) },
			},
			{
				Name:      "workspace",
				Usage:     "verify pixelle.workspace.json in the working directory and print the absolute directory",
				ArgsUsage: " ",
				Flags:     []cli.Flag{&cli.StringFlag{Name: "expect", Usage: "the workspace ID from the Pixelle prompt (required)"}},
				Action: func(c *cli.Context) error {
					args, err := positional(c)
					if err != nil {
						return fail(c, err)
					}
					if len(args) != 0 {
						return fail(c, usageErr("USAGE", "workspace takes no arguments"))
					}
					ws, err := VerifyWorkspace(".", c.String("expect"))
					if err != nil {
						return fail(c, err)
					}
					emit(c.App.Writer, ws)
					fmt.Fprintf(c.App.ErrWriter, "workspace %s verified: %s\n", ws.WorkspaceID, ws.Directory)
					return nil
				},
			},
			{
				Name:      "health",
				Usage:     "check that the relay speaks pixelle-relay/0.2 and permits the website origin",
				ArgsUsage: " ",
				Flags:     []cli.Flag{relayFlag, &cli.StringFlag{Name: "website", Usage: "send Origin: WEBSITE and require the relay to permit it", DefaultText: "none: no Origin is sent"}},
				Action:    func(c *cli.Context) error { return healthAction(c, env) },
			},
			{
				Name:      "pair",
				Usage:     "pair with the code Pixelle shows (- reads it from stdin, out of argv); credentials are stored privately, never printed",
				ArgsUsage: "CODE | -",
				Flags:     []cli.Flag{relayFlag},
				Action:    func(c *cli.Context) error { return pairAction(c, env) },
			},
			{
				Name:      "call",
				Usage:     "send one canvas command and print its result or error object",
				ArgsUsage: "'<command JSON>' | -",
				Flags:     []cli.Flag{relayFlag},
				Action: func(c *cli.Context) error {
					args, err := positional(c)
					if err != nil {
						return fail(c, err)
					}
					if len(args) != 1 {
						return fail(c, usageErr("USAGE", `call takes one command JSON, e.g. '{"method":"state.read"}', or - to read it from stdin`))
					}
					raw := []byte(args[0])
					if args[0] == "-" {
						b, err := io.ReadAll(io.LimitReader(os.Stdin, maxCommandBytes+1))
						if err != nil {
							return fail(c, usageErr("USAGE", "reading the command from stdin: %v", err))
						}
						raw = b
					}
					return callAction(c, env, raw)
				},
			},
			{
				Name:      "state",
				Usage:     "shorthand for call '{\"method\":\"state.read\"}'",
				ArgsUsage: " ",
				Flags:     []cli.Flag{relayFlag},
				Action:    shorthand(env, `{"method":"state.read"}`),
			},
			{
				Name:      "selection",
				Usage:     "shorthand for call '{\"method\":\"selection.read\"}'",
				ArgsUsage: " ",
				Flags:     []cli.Flag{relayFlag},
				Action:    shorthand(env, `{"method":"selection.read"}`),
			},
		},
	}
	// A flag error is a usage error object on stdout like any other.
	usage := func(c *cli.Context, err error, _ bool) error { return fail(c, usageErr("USAGE", "%v", err)) }
	cmd.OnUsageError = usage
	for _, sub := range cmd.Subcommands {
		sub.OnUsageError = usage
	}
	return cmd
}

// shorthand is a read command with no arguments.
func shorthand(env adapters.CommandEnv, command string) cli.ActionFunc {
	return func(c *cli.Context) error {
		args, err := positional(c)
		if err != nil {
			return fail(c, err)
		}
		if len(args) != 0 {
			return fail(c, usageErr("USAGE", "%s takes no arguments", c.Command.Name))
		}
		return callAction(c, env, []byte(command))
	}
}

// emit prints v as one JSON line on stdout.
func emit(w io.Writer, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(w, "%s\n", b)
}

// fail prints the error object on stdout and returns the exit for run()
// to print on stderr.
func fail(c *cli.Context, err error) error {
	var ce *ClientError
	if !errors.As(err, &ce) {
		ce = failErr("FAILED", "%v", err)
	}
	emit(c.App.Writer, ce)
	return hub.Exit(ce.ExitCode(), "hub pixelle: "+ce.Message)
}

// positional is hub.Interspersed (flags may follow the arguments) with
// pixelle's shape for its usage errors: a ClientError, printed as JSON, exit
// 64.
func positional(c *cli.Context) ([]string, error) {
	args, err := hub.Interspersed(c)
	if err != nil {
		return nil, usageErr("USAGE", "%s", err.Error())
	}
	return args, nil
}

// resolveRelay picks --relay, else $PIXELLE_RELAY, else the relay of the
// hub running beside (as `hub mcp` does), else stored, else the default;
// it must be a loopback URL. The first three are explicit: a stored
// pairing with another relay does not apply to them.
func resolveRelay(c *cli.Context, env adapters.CommandEnv, stored string) (string, bool, error) {
	if v := c.String("relay"); v != "" {
		u, err := ParseRelayURL(v)
		return u, true, err
	}
	if v := os.Getenv("PIXELLE_RELAY"); v != "" {
		u, err := ParseRelayURL(v)
		return u, true, err
	}
	if u, ok := hubRelay(c.Context, env); ok {
		return u, true, nil
	}
	if stored != "" {
		u, err := ParseRelayURL(stored)
		return u, false, err
	}
	return DefaultRelay, false, nil
}

// hubRelay is the relay of the hub running beside, if it runs one.
func hubRelay(ctx context.Context, env adapters.CommandEnv) (string, bool) {
	st, ok := env.HubAdapter(ctx, "pixelle")
	if !ok {
		return "", false
	}
	return RelayURL(st.Ports[0]), true
}

func dirsOrFail(c *cli.Context) (hub.Dirs, error) {
	d, err := hub.DirsFromEnv()
	if err != nil {
		return d, fail(c, failErr("NO_HOME", "%v", err))
	}
	return d, nil
}

func healthAction(c *cli.Context, env adapters.CommandEnv) error {
	args, err := positional(c)
	if err != nil {
		return fail(c, err)
	}
	if len(args) != 0 {
		return fail(c, usageErr("USAGE", "health takes no arguments"))
	}
	stored := ""
	if d, err := hub.DirsFromEnv(); err == nil {
		if cr, err := NewCredentialStore(d).Load(); err == nil {
			stored = cr.URL
		}
	}
	relay, _, err := resolveRelay(c, env, stored)
	if err != nil {
		return fail(c, err)
	}
	rep, err := (&Client{Relay: relay}).Health(c.Context, c.String("website"))
	if err != nil {
		return fail(c, err)
	}
	emit(c.App.Writer, rep)
	if !rep.OK {
		return hub.Exit(hub.ExitFailed, "hub pixelle: "+rep.Message)
	}
	fmt.Fprintf(c.App.ErrWriter, "%s: %s\n", relay, rep.Message)
	return nil
}

func pairAction(c *cli.Context, env adapters.CommandEnv) error {
	args, err := positional(c)
	if err != nil {
		return fail(c, err)
	}
	if len(args) != 1 {
		return fail(c, usageErr("USAGE", "pair takes exactly one CODE (12 hexadecimal characters from Pixelle), or - to read it from stdin"))
	}
	code := args[0]
	if code == "-" {
		if code, err = readCode(os.Stdin); err != nil {
			return fail(c, err)
		}
	}
	d, err := dirsOrFail(c)
	if err != nil {
		return err
	}
	store := NewCredentialStore(d)
	stored := ""
	if cr, err := store.Load(); err == nil {
		stored = cr.URL
	}
	relay, _, err := resolveRelay(c, env, stored)
	if err != nil {
		return fail(c, err)
	}
	cr, err := (&Client{Relay: relay}).Pair(c.Context, code)
	if err != nil {
		return fail(c, err)
	}
	if err := store.Save(cr); err != nil {
		return fail(c, failErr("STORE_FAILED", "paired, but cannot store the credentials: %v", err))
	}
	emit(c.App.Writer, struct {
		OK          bool   `json:"ok"`
		Paired      bool   `json:"paired"`
		Relay       string `json:"relay"`
		Credentials string `json:"credentials"`
	}{true, true, cr.URL, store.Path()})
	fmt.Fprintf(c.App.ErrWriter, "paired with %s; credentials stored privately in %s\n", cr.URL, store.Path())
	return nil
}

// readCode takes the pairing code from the first line of r (`pair -`): a
// code in argv is visible to every local process while it runs (ps,
// /proc/PID/cmdline), and any of them could race to consume it.
func readCode(r io.Reader) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(r, 1<<10)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", usageErr("USAGE", "reading the pairing code from stdin: %v", err)
	}
	if line = strings.TrimSpace(line); line == "" {
		return "", usageErr("USAGE", "no pairing code on stdin: pipe the 12 hexadecimal characters Pixelle shows")
	}
	return line, nil
}

func callAction(c *cli.Context, env adapters.CommandEnv, raw []byte) error {
	cmd, err := ValidateCommand(raw)
	if err != nil {
		return fail(c, usageErr("INVALID_COMMAND", "%v", err))
	}
	d, err := dirsOrFail(c)
	if err != nil {
		return err
	}
	cr, err := NewCredentialStore(d).Load()
	if errors.Is(err, errNotPaired) {
		return fail(c, failErr("NOT_PAIRED", "not paired yet: run `hub pixelle pair CODE` with the code Pixelle shows after Connect locally"))
	}
	if err != nil {
		return fail(c, failErr("CREDENTIALS_UNREADABLE", "%v", err))
	}
	relay, explicit, err := resolveRelay(c, env, cr.URL)
	if err != nil {
		return fail(c, err)
	}
	if storedURL, _ := ParseRelayURL(cr.URL); explicit && storedURL != "" && storedURL != relay {
		return fail(c, failErr("RELAY_MISMATCH", "the stored pairing belongs to %s, not %s: pair again against that relay", storedURL, relay))
	}
	out, err := (&Client{Relay: relay}).Call(c.Context, cr, cmd)
	if err != nil {
		return fail(c, err)
	}
	if out.Error != nil {
		fmt.Fprintf(c.App.Writer, "%s\n", out.Error)
		code := out.ErrorCode()
		return hub.Exit(hub.ExitFailed, "hub pixelle: the command failed: "+code+errorHint(code))
	}
	fmt.Fprintf(c.App.Writer, "%s\n", out.Result)
	return nil
}

func serveAction(c *cli.Context, env adapters.CommandEnv) error {
	if c.NArg() != 0 {
		return hub.Exit(hub.ExitUsage, "hub pixelle serve: unexpected arguments; use --website ORIGIN [--port N]")
	}
	// Checked here, not with the flag's Required: urfave/cli answers a
	// missing required flag with the command's help on stdout.
	if c.String("website") == "" {
		return hub.Exit(hub.ExitUsage, "hub pixelle serve: --website ORIGIN is required (the exact Pixelle origin, e.g. https://pixelle.example)")
	}
	cfg := NewConfig()
	cfg.Website, cfg.Port = c.String("website"), c.Int("port")
	srv := New(cfg)
	if err := srv.check(); err != nil {
		return hub.Exit(hub.ExitUsage, "hub pixelle serve: "+err.Error())
	}
	if relay, ok := hubRelay(c.Context, env); ok {
		// §Setup: an occupied relay is checked with the website's Origin
		// and reused when compatible; a second relay nobody dials helps
		// nobody.
		if rep, err := (&Client{Relay: relay}).Health(c.Context, srv.Website()); err == nil && rep.OK {
			fmt.Fprintf(c.App.ErrWriter, "hub pixelle serve: the running hub already serves a compatible relay for %s at %s; reuse it (nothing started)\n", srv.Website(), relay)
			return nil
		}
	}
	log, err := hub.NewLogger(c.App.ErrWriter, hub.LogOptions{})
	if err != nil {
		return hub.Exit(hub.ExitFailed, err.Error())
	}
	dirs, err := hub.DirsFromEnv()
	if err != nil {
		return hub.Exit(hub.ExitFailed, err.Error())
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	run, err := adapters.Standalone{Name: "pixelle", Adapter: srv, Log: log, Dirs: &dirs}.Start(ctx)
	if err == nil {
		log.Info("relay ready; stop it with Ctrl-C", "relay", srv.RelayURL(), "website", srv.Website())
		err = run.Wait()
	}
	if err != nil {
		return hub.Exit(hub.ExitFailed, fmt.Sprintf("hub pixelle serve: %v\nIf another relay holds the port, check it with `hub pixelle health --relay http://127.0.0.1:%d --website %s` and reuse it when compatible; never stop an unknown process — choose another --port instead.", err, c.Int("port"), srv.Website()))
	}
	return nil
}
