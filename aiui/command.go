package aiui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/aiui/tools"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/mcpserver"
)

// Command is the `hub aiui` command group.
func Command() *cli.Command {
	return &cli.Command{
		Name:  "aiui",
		Usage: "the aiui channel backend and its MCP and shell faces",
		Subcommands: []*cli.Command{
			serveCommand(), mcpCommand(), promptsCommand(), sendCommand(), toolsCommand(), callCommand(),
		},
	}
}

func dirsFromEnv() (*hub.Dirs, error) {
	d, err := hub.DirsFromEnv()
	if err != nil {
		return nil, hub.Exit(hub.ExitFailed, "hub aiui: "+err.Error())
	}
	return &d, nil
}

// stderrLog logs to stderr only: stdout belongs to MCP and JSON output.
// stderrLog is the command's logger; a --log-level it does not know is a
// usage error, not a silent "info".
func stderrLog(cmd, level string) (*slog.Logger, error) {
	l, err := hub.NewLogger(os.Stderr, hub.LogOptions{Level: level})
	if err != nil {
		return nil, hub.Exit(hub.ExitUsage, "hub aiui "+cmd+": --log-level "+err.Error())
	}
	return l, nil
}

// logLevelFlag is --log-level, checked before anything starts.
func logLevelFlag() cli.Flag {
	return &cli.StringFlag{Name: "log-level", Value: "info", Usage: "stderr log level: debug, info, warn or error"}
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "run a standalone channel backend on 127.0.0.1 (the port is logged on stderr and written to $XDG_CACHE_HOME/aiui/mcp/<pid>.json, default ~/.cache)",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "port", Value: 0, Usage: "port to bind (0 = OS-assigned)"},
			&cli.StringSliceFlag{Name: "origin", Usage: "extra app origin allowed on /ws, /tools, /prompt, /debug (repeatable)", DefaultText: "none"},
			requireKeyFlag(), logLevelFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return hub.Exit(hub.ExitUsage, "hub aiui serve: unexpected arguments")
			}
			log, err := stderrLog("serve", c.String("log-level"))
			if err != nil {
				return err
			}
			dirs, err := dirsFromEnv()
			if err != nil {
				return err
			}
			cfg := DefaultConfig()
			cfg.Port = c.Int("port")
			cfg.Origins = c.StringSlice("origin")
			cfg.RequirePromptKey = c.Bool("require-prompt-key")
			if err := cfg.Validate(); err != nil {
				return hub.Exit(hub.ExitUsage, "hub aiui serve: "+err.Error())
			}
			ctx, cancel := signalContext()
			defer cancel()
			s := New(cfg)
			s.Kind = KindServe
			if err := (adapters.Standalone{Name: "aiui", Adapter: s, Log: log, Dirs: dirs}).Serve(ctx); err != nil {
				return hub.Exit(hub.ExitFailed, "hub aiui serve: "+err.Error())
			}
			return nil
		},
	}
}

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "an MCP stdio server attached to the running backend (or one it starts in-process); stdout carries only JSON-RPC",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "no-page-tools-notify", Usage: "do not push page-tools changes over the channel"},
			requireKeyFlag(), logLevelFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return hub.Exit(hub.ExitUsage, "hub aiui mcp: unexpected arguments")
			}
			log, err := stderrLog("mcp", c.String("log-level"))
			if err != nil {
				return err
			}
			dirs, err := dirsFromEnv()
			if err != nil {
				return err
			}
			ctx, cancel := signalContext()
			defer cancel()
			lc := hub.NewLifecycle(hub.IdleRules{})
			own := &inProcess{dirs: *dirs, lc: lc, log: log, port: DefaultPort, requireKey: c.Bool("require-prompt-key")}
			defer own.stop()
			cl, err := Locate(ctx, *dirs)
			if err != nil {
				log.Info("no aiui backend running; starting one in-process", "why", err)
				cl, err = own.start(ctx)
				if err != nil {
					return hub.Exit(hub.ExitFailed, "hub aiui mcp: "+err.Error())
				}
			}
			cwd, _ := os.Getwd()
			err = RunFace(ctx, mcpserver.Stdio(), cl, FaceOptions{
				NotifyPageTools: !c.Bool("no-page-tools-notify"), CWD: cwd, Log: log, OnInitialized: lc.Own, Version: "1",
				Revive: own.revive,
			})
			if err != nil && !errors.Is(err, io.EOF) {
				return hub.Exit(hub.ExitFailed, "hub aiui mcp: "+err.Error())
			}
			return nil
		},
	}
}

// inProcess is the backend an MCP face runs itself: at its start when none
// runs, or later when the one it used went away (FaceOptions.Revive).
type inProcess struct {
	dirs hub.Dirs
	lc   *hub.Lifecycle
	log  *slog.Logger
	port int // preferred port (any free one when it is taken)
	// requireKey is require_prompt_key for the backend it starts.
	requireKey bool
	// follow paces the wait for a backend starting on port (zero: the
	// defaults).
	follow adapters.FollowTiming

	mu   sync.Mutex
	halt func() // set once one runs
}

// start runs the backend and returns a client for it.
func (p *inProcess) start(ctx context.Context) (*Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.startLocked(ctx)
}

func (p *inProcess) startLocked(ctx context.Context) (*Client, error) {
	if p.halt != nil {
		return Locate(ctx, p.dirs)
	}
	if cl := portHolder(ctx, p.follow, p.dirs, p.port); cl != nil {
		return cl, nil
	}
	cl, halt, err := startInProcess(ctx, p.dirs, p.lc, p.log, p.port, p.requireKey)
	if err != nil {
		return nil, err
	}
	p.halt = halt
	return cl, nil
}

// revive starts the backend unless one runs already (ours, or another
// face's that took over first); the face's client finds it through the
// control file.
func (p *inProcess) revive(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.halt != nil {
		return nil
	}
	if _, err := Locate(ctx, p.dirs); err == nil {
		return nil
	}
	p.log.Info("the aiui backend this face used is gone; starting one in-process")
	_, err := p.startLocked(ctx)
	return err
}

// stop ends the backend, if one was started.
func (p *inProcess) stop() {
	p.mu.Lock()
	halt := p.halt
	p.mu.Unlock()
	if halt != nil {
		halt()
	}
}

// startInProcess runs a backend inside the MCP process (port, or any free
// port when it is taken) and returns a client for it.
func startInProcess(ctx context.Context, dirs hub.Dirs, lc *hub.Lifecycle, log *slog.Logger, port int, requireKey bool) (*Client, func(), error) {
	cfg := DefaultConfig()
	cfg.Port = port
	cfg.RequirePromptKey = requireKey
	s := New(cfg)
	s.Kind, s.FallbackAnyPort = KindMCP, true
	run, err := adapters.Standalone{Name: "aiui", Adapter: s, Log: log, Dirs: &dirs, Lifecycle: lc, ReadyTimeout: 10 * time.Second}.Start(ctx)
	if err != nil {
		return nil, nil, err
	}
	stop := func() { run.Stop() }
	cl, err := Locate(ctx, dirs)
	if err != nil {
		stop()
		return nil, nil, err
	}
	return cl, stop, nil
}

// requireKeyFlag is --require-prompt-key (adapters.aiui.require_prompt_key)
// for a backend the command runs.
func requireKeyFlag() cli.Flag {
	return &cli.BoolFlag{Name: "require-prompt-key",
		Usage: "the backend this starts takes POST /prompt only with its per-start prompt key (the control file's promptKey; `hub aiui send` sends it), refusing the spec's unauthenticated posts any local user can make"}
}

// locate finds the backend for a shell face or exits 3.
func locate(c *cli.Context) (*Client, error) {
	dirs, err := dirsFromEnv()
	if err != nil {
		return nil, err
	}
	cl, err := Locate(c.Context, *dirs)
	if err != nil {
		return nil, hub.Exit(hub.ExitNotRunning, "hub aiui: "+err.Error()+nextStep(err, ""))
	}
	return cl, nil
}

// Next steps for the errors a user of the shell faces meets most.
const (
	startBackendStep = "start one: `hub start` (the hub runs aiui; `hub status` shows it) or `hub aiui serve`"
	openPageStep     = "open your app in a browser with the aiui dev overlay (its page connects to /tools by itself), then retry; `hub aiui tools` lists what pages registered"
)

// nextStep is the line to add to err, or to a call's route error
// message routeMsg, naming what to do next ("" when there is nothing to
// add).
func nextStep(err error, routeMsg string) string {
	switch {
	case errors.Is(err, ErrNoBackend):
		return "\n" + startBackendStep
	case routeMsg == tools.NoPageMsg:
		return "\n" + openPageStep
	}
	return ""
}

func promptsCommand() *cli.Command {
	return &cli.Command{
		Name:  "prompts",
		Usage: "print every recorded prompt as JSON lines ({seq, at, text, meta}); --follow keeps printing new ones (exit 3 when the backend stops)",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return hub.Exit(hub.ExitUsage, "hub aiui prompts: unexpected arguments")
			}
			dirs, err := dirsFromEnv()
			if err != nil {
				return err
			}
			out := c.App.Writer
			cl, lerr := Locate(c.Context, *dirs)
			if lerr != nil {
				if c.Bool("follow") {
					return hub.Exit(hub.ExitNotRunning, "hub aiui prompts --follow: "+lerr.Error())
				}
				// the record outlives the backend: read it directly, from
				// a dir checked as the backend checks it (it would refuse a
				// link or a dir others can write and never use it)
				switch err := hub.CheckPrivateDir(StateDir(*dirs)); {
				case errors.Is(err, fs.ErrNotExist):
					return nil // nothing was ever recorded
				case err != nil:
					return hub.Exit(hub.ExitFailed, "hub aiui prompts: "+err.Error())
				}
				enc := json.NewEncoder(out)
				enc.SetEscapeHTML(false)
				err := TakeRecord(StateDir(*dirs)+"/prompts.jsonl", func(r Record) error { return enc.Encode(r) })
				if err != nil {
					return hub.Exit(hub.ExitFailed, "hub aiui prompts: "+err.Error())
				}
				return nil
			}
			ctx, cancel := signalContext()
			defer cancel()
			err = cl.Prompts(ctx, c.Bool("follow"), func(_ Record, line []byte) error {
				_, err := fmt.Fprintf(out, "%s\n", line)
				return err
			})
			switch {
			case ctx.Err() != nil:
				return nil // Ctrl-C: the user stopped following
			case err != nil && !(errors.Is(err, ErrStreamCut) && c.Bool("follow")):
				return hub.Exit(hub.ExitFailed, "hub aiui prompts: "+err.Error())
			case c.Bool("follow"):
				// as when none ran at the start: a script can tell the
				// backend's end from its own
				return hub.Exit(hub.ExitNotRunning, "hub aiui prompts --follow: the backend stopped")
			}
			return nil
		},
	}
}

// maxSendInput bounds the prompt `send` reads from stdin; the backend
// refuses more than its max_message_bytes anyway.
const maxSendInput = 64 << 20

func sendCommand() *cli.Command {
	return &cli.Command{
		Name:      "send",
		Usage:     "deliver a prompt to the agent through POST /prompt with the backend's prompt key (TEXT, or stdin when it is absent or -); prints {\"ok\":true,\"seq\":N}; exit 0 ok, 1 refused, 3 no backend, 64 usage",
		ArgsUsage: "[TEXT|-]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "root", Usage: "the source root `DIR` the prompt is about (routes it to the face working there)", DefaultText: "none"},
		},
		Action: func(c *cli.Context) error {
			pos, err := hub.Interspersed(c)
			if err != nil {
				return err
			}
			if len(pos) > 1 {
				return hub.Exit(hub.ExitUsage, "hub aiui send: want one TEXT argument (quote it), or the prompt on stdin")
			}
			var text string
			if len(pos) == 1 && pos[0] != "-" {
				text = pos[0]
			} else {
				b, err := io.ReadAll(io.LimitReader(c.App.Reader, maxSendInput+1))
				if err != nil {
					return hub.Exit(hub.ExitFailed, "hub aiui send: reading stdin: "+err.Error())
				}
				if len(b) > maxSendInput {
					return hub.Exit(hub.ExitUsage, fmt.Sprintf("hub aiui send: the prompt is longer than %d bytes", maxSendInput))
				}
				text = string(b)
			}
			if strings.TrimSpace(text) == "" {
				return hub.Exit(hub.ExitUsage, "hub aiui send: the prompt is empty")
			}
			var meta *frame.HelloMeta
			if root := c.String("root"); root != "" {
				abs, err := filepath.Abs(root)
				if err != nil {
					return hub.Exit(hub.ExitUsage, "hub aiui send: --root: "+err.Error())
				}
				meta = &frame.HelloMeta{Source: &frame.SourceInfo{Root: abs}}
			}
			cl, err := locate(c)
			if err != nil {
				return err
			}
			seq, err := cl.Prompt(c.Context, text, meta)
			var se *statusError
			switch {
			case errors.As(err, &se):
				return hub.Exit(hub.ExitFailed, "hub aiui send: "+err.Error())
			case err != nil:
				return hub.Exit(hub.ExitNotRunning, "hub aiui send: "+err.Error()+nextStep(err, ""))
			}
			fmt.Fprintf(c.App.Writer, "{\"ok\":true,\"seq\":%d}\n", seq)
			return nil
		},
	}
}

func toolsCommand() *cli.Command {
	return &cli.Command{
		Name:  "tools",
		Usage: "list the page tools browser pages registered (the page_tools_list directory)",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the directory as JSON"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return hub.Exit(hub.ExitUsage, "hub aiui tools: unexpected arguments")
			}
			cl, err := locate(c)
			if err != nil {
				return err
			}
			regs, err := cl.Tools(c.Context)
			if err != nil {
				return hub.Exit(hub.ExitNotRunning, "hub aiui tools: "+err.Error()+nextStep(err, ""))
			}
			out := c.App.Writer
			if c.Bool("json") {
				b, _ := json.MarshalIndent(nonNil(regs), "", "  ")
				fmt.Fprintf(out, "%s\n", b)
				return nil
			}
			tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TOOL\tCLIENT\tACTIVE\tURL\tDESCRIPTION")
			for _, r := range regs {
				for _, t := range r.Tools {
					active := ""
					if r.ActiveTab {
						active = "yes"
					}
					fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\t%s\n", r.NS, t.Name, r.ClientID, active, r.URL, t.Description)
				}
			}
			return tw.Flush()
		},
	}
}

// callArgs parses `call <name> [JSON-ARGS] [--ns NS] [--client-id ID]`
// with flags allowed anywhere.
func callArgs(args []string) (tools.CallRequest, error) {
	var req tools.CallRequest
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		switch name {
		case "--ns", "-ns", "--client-id", "-client-id":
			if !hasVal {
				if i+1 >= len(args) {
					return req, fmt.Errorf("%s needs a value", name)
				}
				i++
				val = args[i]
			}
			if strings.TrimLeft(name, "-") == "ns" {
				req.NS = val
			} else {
				req.ClientID = val
			}
		case "--help", "-h":
			return req, errHelp
		default:
			if strings.HasPrefix(a, "-") && len(a) > 1 && !json.Valid([]byte(a)) {
				return req, fmt.Errorf("unknown flag %s", a)
			}
			pos = append(pos, a)
		}
	}
	if len(pos) < 1 || len(pos) > 2 || pos[0] == "" {
		return req, errors.New("want a tool name and optional JSON arguments")
	}
	req.Name = pos[0]
	if len(pos) == 2 {
		// Say what is wrong in the caller's terms, not the decoder's
		// ("invalid character 'o' in literal null").
		var obj map[string]any
		if !json.Valid([]byte(pos[1])) {
			return req, fmt.Errorf("JSON-ARGS must be a JSON object like '{\"f\":2}'; this is not valid JSON: %.80s", pos[1])
		}
		if err := json.Unmarshal([]byte(pos[1]), &obj); err != nil || obj == nil {
			return req, fmt.Errorf("JSON-ARGS must be a JSON object like '{\"f\":2}', got %.80s", pos[1])
		}
		req.Args = json.RawMessage(pos[1])
	}
	return req, nil
}

const callUsage = "usage: hub aiui call <name> [JSON-ARGS] [--ns NS] [--client-id ID]"

// errHelp is --help among call's arguments: the help, exit 0, not a usage
// error (call parses its own flags, so urfave/cli never sees it).
var errHelp = errors.New("help requested")

func callCommand() *cli.Command {
	return &cli.Command{
		Name:      "call",
		Usage:     "call a page tool (same routing as page_tools_call); JSON on stdout; exit 0 ok, 1 tool or routing error, 3 no backend, 64 usage",
		ArgsUsage: "<name> [JSON-ARGS] [--ns NS] [--client-id ID]",
		Description: "JSON-ARGS is a JSON object. --ns NS picks the page namespace holding the tool,\n" +
			"--client-id ID one page; without them the call is routed as page_tools_call routes it.",
		SkipFlagParsing: true,
		HideHelpCommand: true,
		Action: func(c *cli.Context) error {
			req, err := callArgs(c.Args().Slice())
			if errors.Is(err, errHelp) {
				return cli.ShowSubcommandHelp(c)
			}
			if err != nil {
				return hub.Exit(hub.ExitUsage, "hub aiui call: "+err.Error()+"\n"+callUsage)
			}
			cl, err := locate(c)
			if err != nil {
				return err
			}
			res, err := cl.Call(c.Context, req)
			if err != nil {
				return hub.Exit(hub.ExitNotRunning, "hub aiui call: "+err.Error()+nextStep(err, ""))
			}
			b, _ := json.Marshal(res)
			fmt.Fprintf(c.App.Writer, "%s\n", b)
			if !res.OK {
				return hub.Exit(hub.ExitFailed, "hub aiui call: "+res.Error+nextStep(nil, res.RouteError))
			}
			return nil
		},
	}
}
