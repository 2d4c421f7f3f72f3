package stitchslop

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/hub"
)

// Command is the `hub stitchslop` command group: with flags it runs a
// standalone bridge (§1); a bare word selects the shell client (§4.4).
func Command() *cli.Command {
	return &cli.Command{
		Name:      "stitchslop",
		Usage:     "run a standalone Stitch Slop bridge, or drive a running one from a shell",
		UsageText: "hub stitchslop --origin URL [--port N] [--config-dir DIR] [--agent-idle-minutes M]   (token in STITCHSLOP_TOKEN)\n   hub stitchslop status | tools | wait [SECONDS] | call <command> [JSON-ARGS] [--out FILE] [--port N] [--config-dir DIR]\n   hub stitchslop pair [--port N] [--config-dir DIR]   (token from STITCHSLOP_TOKEN or stdin)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "origin", Usage: "the only site allowed to connect, e.g. https://www.stitchslop.com (required)"},
			&cli.IntFlag{Name: "port", Usage: "pin one port instead of scanning 8787-8790"},
			&cli.StringFlag{Name: "config-dir", Value: DefaultConfigDir, Usage: "where pairings and session files live"},
			&cli.IntFlag{Name: "agent-idle-minutes", Value: DefaultAgentIdleMinutes, Usage: "exit after this long with no agent activity"},
			&cli.BoolFlag{Name: "version", Usage: "print the version and protocol number"},
		},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return hub.Exit(hub.ExitUsage, "hub stitchslop: "+err.Error())
		},
		Subcommands: []*cli.Command{
			clientCommand("status", "show the running bridge's state (JSON)", "", "status"),
			clientCommand("tools", "list the attached tab's tools (JSON)", "", "tools"),
			clientCommand("wait", "wait [SECONDS] until a tab attaches (default 90)", "[SECONDS]", "wait"),
			clientCommand("call", "call <command> [JSON-ARGS]: run a page command; files in by path (--file, --file-text), out into a directory (--save)",
				"<command> [JSON-ARGS] [--file KEY=PATH | --file-text KEY=PATH]... [--out FILE | --save DIR [--text-file NAME] [--overwrite]] [--raw]", "call"),
			clientCommand("pair", "arm a one-time token on the running bridge (STITCHSLOP_TOKEN or stdin)", "", "pair"),
			clientCommand("listen", "print the user's voice from the tab, one JSON line per event (heard, connected, disconnected, voice-on, voice-off, unavailable)", "", "listen"),
		},
		Action: runBridgeCommand,
	}
}

func runBridgeCommand(c *cli.Context) error {
	if c.Bool("version") {
		fmt.Fprintf(c.App.Writer, "%s %s (protocol %d)\n", ServerName, Version, ProtocolVersion)
		return nil
	}
	if c.Args().Present() {
		return hub.Exit(hub.ExitUsage, fmt.Sprintf("hub stitchslop: unknown command %q (want status, tools, wait, call or pair)", c.Args().First()))
	}
	if c.String("origin") == "" {
		return hub.Exit(hub.ExitUsage, "hub stitchslop: --origin is required (the only site allowed to connect)")
	}
	// 0 is "scan" only when --port is absent: --port 0 pins nothing.
	if p := c.Int("port"); c.IsSet("port") && (p < 1 || p > 65535) {
		return hub.Exit(hub.ExitUsage, fmt.Sprintf("hub stitchslop: --port must be 1..65535, got %d", p))
	}
	if m := c.Int("agent-idle-minutes"); m <= 0 {
		return hub.Exit(hub.ExitUsage, "hub stitchslop: --agent-idle-minutes must be positive")
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals()...)
	defer stop()
	err := RunStandalone(ctx, StandaloneOptions{
		Origin:    c.String("origin"),
		Port:      c.Int("port"),
		ConfigDir: c.String("config-dir"),
		Token:     os.Getenv("STITCHSLOP_TOKEN"),
		AgentIdle: time.Duration(c.Int("agent-idle-minutes")) * time.Minute,
		Stdin:     os.Stdin,
		Stdout:    c.App.Writer,
		Stderr:    c.App.ErrWriter,
	})
	if err != nil {
		return hub.Exit(hub.ExitFailed, "hub stitchslop: "+err.Error())
	}
	return nil
}

// stopSignals end a standalone bridge cleanly (session file removed, the
// reason on stderr). SIGHUP is one: a bridge started in a terminal that
// is then closed would otherwise die leaving its session file. Under
// nohup it stays ignored, as nohup asks: Notify would re-enable it.
func stopSignals() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

// clientArgs are a shell-client command line, flags accepted anywhere.
type clientArgs struct {
	pos       []string
	port      int
	configDir string
	// call only:
	out       string
	files     []FileArg // --file KEY=PATH, --file-text KEY=PATH
	save      string    // --save DIR
	textFile  string    // --text-file NAME
	overwrite bool      // --overwrite
	raw       bool      // --raw
}

// callFlags are the flags only call takes; boolFlags take no value.
var (
	callFlags = []string{"out", "file", "file-text", "save", "text-file", "overwrite", "raw"}
	boolFlags = []string{"overwrite", "raw"}
)

func parseClientArgs(args []string, allowOut bool) (clientArgs, error) {
	var ca clientArgs
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		// A negative number is an argument (wait -1), refused for its value.
		_, numErr := strconv.ParseFloat(a, 64)
		if !strings.HasPrefix(a, "-") || a == "-" || numErr == nil {
			ca.pos = append(ca.pos, a)
			continue
		}
		if a == "--" {
			ca.pos = append(ca.pos, args[i+1:]...)
			break
		}
		if slices.Contains(callFlags, name) && !allowOut {
			return ca, fmt.Errorf("--%s only applies to call", name)
		}
		if slices.Contains(boolFlags, name) {
			if hasVal {
				return ca, fmt.Errorf("--%s takes no value", name)
			}
		} else if !hasVal {
			if name != "port" && name != "config-dir" && !slices.Contains(callFlags, name) {
				return ca, fmt.Errorf("unknown flag %s", a)
			}
			if i+1 >= len(args) {
				return ca, fmt.Errorf("flag %s needs a value", a)
			}
			i++
			val = args[i]
		}
		switch name {
		case "port":
			p, err := strconv.Atoi(val)
			if err != nil || p < 1 || p > 65535 {
				return ca, fmt.Errorf("--port must be 1..65535, got %q", val)
			}
			ca.port = p
		case "config-dir":
			ca.configDir = val
		case "out":
			ca.out = val
		case "file", "file-text":
			key, path, ok := strings.Cut(val, "=")
			if !ok || key == "" || path == "" {
				return ca, fmt.Errorf("--%s takes KEY=PATH, got %q", name, clip(val, 80))
			}
			as := "dataUrl"
			if name == "file-text" {
				as = "text"
			}
			ca.files = append(ca.files, FileArg{Path: path, Arg: key, As: as})
		case "save":
			ca.save = val
		case "text-file":
			ca.textFile = val
		case "overwrite":
			ca.overwrite = true
		case "raw":
			ca.raw = true
		default:
			return ca, fmt.Errorf("unknown flag %s", a)
		}
	}
	return ca, nil
}

// clientDescription is every client command's help body: it parses its
// own flags (anywhere on the line), so urfave/cli cannot list them.
const clientDescription = "--port N picks the bridge on port N (needed only when several run);\n" +
	"--config-dir DIR is where its session file is (default " + DefaultConfigDir + ").\n" +
	"JSON on stdout; exit 0 ok, 1 refused or failed, 3 no bridge running, 64 usage."

func clientCommand(name, usage, args, kind string) *cli.Command {
	return &cli.Command{
		Name:            name,
		Usage:           usage,
		UsageText:       strings.Join(strings.Fields("hub stitchslop "+name+" "+args+" [--port N] [--config-dir DIR]"), " "),
		Description:     clientDescription,
		HideHelpCommand: true,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			return runClient(c, kind)
		},
	}
}

func usageErr(format string, a ...any) error {
	return hub.Exit(hub.ExitUsage, "hub stitchslop: "+fmt.Sprintf(format, a...))
}

func runClient(c *cli.Context, kind string) error {
	for _, a := range c.Args().Slice() {
		if a == "-h" || a == "--help" {
			return cli.ShowSubcommandHelp(c)
		}
	}
	ca, err := parseClientArgs(c.Args().Slice(), kind == "call")
	if err != nil {
		return usageErr("%s %v", kind+":", err)
	}
	// Flags given to the group (`hub stitchslop --port 8788 status`) apply too.
	if parent := c.Lineage()[1]; parent != nil {
		if ca.port == 0 && parent.IsSet("port") {
			ca.port = parent.Int("port")
		}
		if ca.configDir == "" && parent.IsSet("config-dir") {
			ca.configDir = parent.String("config-dir")
		}
	}
	if ca.configDir == "" {
		ca.configDir = DefaultConfigDir
	}
	dirs, err := hub.DirsFromEnv()
	if err != nil {
		return hub.Exit(hub.ExitFailed, err.Error())
	}
	sc := &shellClient{ConfigDir: hub.ExpandHome(ca.configDir, dirs.Home), Port: ca.port, Stdout: c.App.Writer, Stderr: c.App.ErrWriter}

	switch kind {
	case "status", "tools":
		if len(ca.pos) > 0 {
			return usageErr("%s takes no arguments", kind)
		}
		out, err := sc.do("GET", "/"+kind, nil, 30*time.Second)
		if err != nil {
			return err
		}
		return sc.emit(out)
	case "wait":
		secs := float64(DefaultWaitSeconds)
		if len(ca.pos) > 1 {
			return usageErr("wait takes at most one argument: SECONDS")
		}
		if len(ca.pos) == 1 {
			v, err := strconv.ParseFloat(ca.pos[0], 64)
			if err != nil || v < 0 || v > MaxControlWaitSeconds {
				return usageErr("wait: SECONDS must be a number in 0..%d, got %q", MaxControlWaitSeconds, ca.pos[0])
			}
			secs = v
		}
		out, err := sc.do("POST", "/wait", map[string]any{"seconds": secs}, time.Duration(secs*float64(time.Second))+30*time.Second)
		if err != nil {
			return err
		}
		return sc.emit(out)
	case "call":
		if len(ca.pos) < 1 || len(ca.pos) > 2 {
			return usageErr("usage: hub stitchslop call <command> [JSON-ARGS] [--file KEY=PATH | --file-text KEY=PATH]... [--out FILE | --save DIR [--text-file NAME] [--overwrite]] [--raw]")
		}
		if strings.TrimSpace(ca.pos[0]) == "" {
			return usageErr("call: the command name is empty")
		}
		// Encoding would turn bad bytes into U+FFFD: a command never named.
		if !utf8.ValidString(ca.pos[0]) {
			return usageErr("call: the command name is not valid UTF-8")
		}
		args := json.RawMessage(`{}`)
		if len(ca.pos) == 2 {
			if !json.Valid([]byte(ca.pos[1])) {
				return usageErr("call: JSON-ARGS is not valid JSON: %s", clip(ca.pos[1], 80))
			}
			if !utf8.ValidString(ca.pos[1]) {
				return usageErr("call: JSON-ARGS is not valid UTF-8")
			}
			if !isJSONObject(json.RawMessage(ca.pos[1])) {
				return usageErr("call: JSON-ARGS must be a JSON object, like '{\"limit\":5}'")
			}
			args = json.RawMessage(ca.pos[1])
		}
		return sc.call(ca, ca.pos[0], args)
	case "listen":
		if len(ca.pos) > 0 {
			return usageErr("listen takes no arguments")
		}
		// Interrupting it kills it: nothing is left to undo (the lock dies
		// with the process).
		return sc.listen(c.Context)
	case "pair":
		if len(ca.pos) > 0 {
			return usageErr("pair takes no arguments: pass the token in STITCHSLOP_TOKEN or on stdin, never on the command line (every process can read argv)")
		}
		token, err := readToken(os.Getenv("STITCHSLOP_TOKEN"), c.App.Reader)
		if err != nil {
			return usageErr("pair: %v", err)
		}
		out, err := sc.do("POST", "/pair", map[string]any{"token": token}, 30*time.Second)
		if err != nil {
			return err
		}
		return sc.emit(out)
	}
	return usageErr("unknown command %q", kind)
}

// call is `hub stitchslop call`: the files named put into args first
// (nothing is sent when one is refused), the answer's image written to
// --out or its files into --save, and any bulk left out of what is
// printed unless --raw.
func (sc *shellClient) call(ca clientArgs, command string, args json.RawMessage) error {
	if ca.out != "" && ca.save != "" {
		return usageErr("call: --out and --save do not go together (--save writes the image too)")
	}
	if ca.save == "" && (ca.textFile != "" || ca.overwrite) {
		return usageErr("call: --text-file and --overwrite go with --save DIR")
	}
	args, err := withFiles(args, ca.files)
	if err != nil {
		return hub.Exit(hub.ExitFailed, "hub stitchslop: nothing was sent: "+strings.TrimPrefix(err.Error(), errRefused.Error()+": "))
	}
	// remoteTimeout: the page's whole CallTimeout, and a margin.
	out, err := sc.do("POST", "/call", map[string]any{"command": command, "args": args}, remoteTimeout)
	if err != nil {
		return err
	}
	if ca.out != "" {
		if out, err = saveImage(out, ca.out, sc.Stderr); err != nil {
			return err
		}
	}
	var notSaved []NotSaved
	if ca.save != "" {
		var saved []SavedFile
		var saveOut []byte
		saveOut, saved, notSaved, err = saveFiles(out, SaveOptions{Dir: ca.save, TextFile: ca.textFile, Overwrite: ca.overwrite, Command: command})
		switch {
		case errors.Is(err, errNoFiles):
			fmt.Fprintf(sc.Stderr, "%v; nothing written to %s\n", err, ca.save)
		case err != nil:
			return hub.Exit(hub.ExitFailed, "hub stitchslop: "+err.Error())
		default:
			out = saveOut
			for _, f := range saved {
				fmt.Fprintf(sc.Stderr, "saved %d bytes to %s\n", f.Bytes, f.Path)
			}
			for _, n := range notSaved {
				fmt.Fprintf(sc.Stderr, "not saved: %s: %s\n", n.Name, n.Reason)
			}
		}
	}
	if !ca.raw {
		out = leaveOutBulk(out, bulkHowShell)
	}
	if err := sc.emit(out); err != nil {
		return err
	}
	if len(notSaved) > 0 {
		return hub.Exit(hub.ExitFailed, fmt.Sprintf("hub stitchslop: %d file(s) of the answer were not saved (see notSaved)", len(notSaved)))
	}
	return nil
}

// readToken takes the token from the environment, else the first line of
// stdin.
func readToken(env string, stdin io.Reader) (string, error) {
	if t := strings.TrimSpace(env); t != "" {
		return t, nil
	}
	if stdin == nil {
		stdin = os.Stdin
	}
	line, err := bufio.NewReader(io.LimitReader(stdin, 4<<10)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	if t := strings.TrimSpace(line); t != "" {
		return t, nil
	}
	return "", errors.New("no token: set STITCHSLOP_TOKEN or pipe the token on stdin")
}
