package control

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/hub"
)

var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print machine-readable JSON on stdout"}

// Command is the `hub geturl` command group; serve (`hub geturl serve`)
// runs the adapter itself, which this package does not build.
func Command(serve *cli.Command) *cli.Command {
	cmd := commands(serve)
	jsonErrors(cmd)
	return cmd
}

// jsonErrors makes the failure of every command with --json a JSON object
// on stdout too, {"ok":false,"error":CODE,"message":…}, as pixelle's and
// stitchslop's clients do: a script reading stdout gets one JSON value
// either way (the line on stderr and the exit code stay). CODE is the
// control plane's refusal code, else usage, not_running or failed.
func jsonErrors(c *cli.Command) {
	for _, sub := range c.Subcommands {
		jsonErrors(sub)
	}
	action := c.Action
	if action == nil || !slices.Contains(c.Flags, cli.Flag(jsonFlag)) {
		return
	}
	c.Action = func(ctx *cli.Context) error {
		err := action(ctx)
		if err == nil || !ctx.Bool("json") {
			return err
		}
		out := struct {
			OK      bool   `json:"ok"`
			Code    string `json:"error"`
			Message string `json:"message"`
		}{Code: "failed", Message: err.Error()}
		var re *refused
		switch {
		case errors.As(err, &re):
			out.Code, out.Message = re.code, re.msg
		case hub.ExitCode(err) == hub.ExitUsage:
			out.Code = "usage"
		case hub.ExitCode(err) == hub.ExitNotRunning:
			out.Code = "not_running"
		}
		emitJSON(ctx.App.Writer, out)
		return err
	}
}

func commands(serve *cli.Command) *cli.Command {
	return &cli.Command{
		Name:  "geturl",
		Usage: "the GET-only URL bridge for URL-reader agents: serve it, register projects, mint session URLs",
		Subcommands: []*cli.Command{
			serve,
			openCommand(),
			{
				Name:  "project",
				Usage: "register project roots and their permissions",
				Subcommands: []*cli.Command{
					{Name: "add", Usage: "register DIR (its canonical realpath) as a project", ArgsUsage: "DIR",
						Flags: []cli.Flag{&cli.StringFlag{Name: "name", Usage: "project `NAME` (default: the directory's name)"},
							&cli.BoolFlag{Name: "write", Usage: "allow file writes"}, &cli.BoolFlag{Name: "terminal", Usage: "allow terminal commands"},
							&cli.BoolFlag{Name: "bridges", Usage: "let sessions reach the hub's bridges (browser pages' tools) as /k plugins; needs --write"}, jsonFlag},
						Action: projectAdd},
					{Name: "list", Usage: "list projects", Flags: []cli.Flag{jsonFlag}, Action: projectList},
					{Name: "remove", Usage: "forget a project no session uses", ArgsUsage: "NAME", Flags: []cli.Flag{jsonFlag}, Action: projectRemove},
					{Name: "set", Usage: "change a project's permissions or root (rotates its sessions)", ArgsUsage: "NAME",
						Flags: []cli.Flag{&cli.BoolFlag{Name: "write", Usage: "allow file writes (--write=false to revoke)", DefaultText: "left unchanged"},
							&cli.BoolFlag{Name: "terminal", Usage: "allow terminal commands (--terminal=false to revoke)", DefaultText: "left unchanged"},
							&cli.BoolFlag{Name: "bridges", Usage: "let sessions reach the hub's bridges as /k plugins; needs write (--bridges=false to revoke; --write=false revokes it too)", DefaultText: "left unchanged"},
							&cli.StringFlag{Name: "root", Usage: "move the project to `DIR`", DefaultText: "left unchanged"}, jsonFlag},
						Action: projectSet},
				},
			},
			{
				Name:  "session",
				Usage: "create and manage agent sessions (each has its own capability URLs)",
				Subcommands: []*cli.Command{
					{Name: "new", Usage: "create a session and print its Init URL and prompt",
						Flags: []cli.Flag{&cli.StringFlag{Name: "project", Usage: "project `NAME` (required)"},
							&cli.StringFlag{Name: "label", Usage: "a `LABEL` for your own bookkeeping", DefaultText: "none"}, jsonFlag},
						Action: sessionNew},
					{Name: "list", Usage: "list sessions", Flags: []cli.Flag{jsonFlag}, Action: sessionList},
					sessionOpCommand("rotate", "give a session new URLs (the old ones stop working)"),
					sessionOpCommand("stop", "stop a session (its URLs stop working)"),
					sessionOpCommand("start", "start a stopped session with new URLs"),
					sessionOpCommand("delete", "delete a session"),
				},
			},
			companionCommand(),
		},
	}
}

// client finds the running control plane.
func client() (*Client, error) {
	d, err := hub.DirsFromEnv()
	if err != nil {
		return nil, hub.Exit(hub.ExitFailed, "hub geturl: "+err.Error())
	}
	return Locate(d)
}

// args applies flags written after the positionals and checks their count.
func args(c *cli.Context, want int, usage string) ([]string, error) {
	pos, err := hub.Interspersed(c)
	if err != nil {
		return nil, err
	}
	if len(pos) != want {
		// A flag this command lacks lands among the positionals: name it,
		// or "usage" alone leaves a typo like --writ to be guessed.
		for _, a := range pos {
			if len(a) > 1 && strings.HasPrefix(a, "-") {
				return nil, hub.Exit(hub.ExitUsage, fmt.Sprintf("hub geturl: unknown flag %s\nusage: hub geturl %s", a, usage))
			}
		}
		return nil, hub.Exit(hub.ExitUsage, "usage: hub geturl "+usage)
	}
	return pos, nil
}

func emitJSON(w io.Writer, v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintf(w, "%s\n", b)
}

// projectOut is a project as the CLI prints it.
type projectOut struct {
	Name     string `json:"name"`
	Root     string `json:"root"`
	Write    bool   `json:"write"`
	Terminal bool   `json:"terminal"`
	Bridges  bool   `json:"bridges"`
}

type projectAnswer struct {
	Project projectOut `json:"project"`
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func printProject(c *cli.Context, p projectOut) {
	if c.Bool("json") {
		emitJSON(c.App.Writer, p)
		return
	}
	fmt.Fprintf(c.App.Writer, "project %s: %s (write: %s, terminal: %s, bridges: %s)\n", p.Name, p.Root, yesNo(p.Write), yesNo(p.Terminal), yesNo(p.Bridges))
}

func projectAdd(c *cli.Context) error {
	pos, err := args(c, 1, "project add DIR [--name NAME] [--write] [--terminal] [--bridges]")
	if err != nil {
		return err
	}
	// The control plane may run with another working directory: resolve
	// DIR here, where the user typed it.
	dir, err := filepath.Abs(pos[0])
	if err != nil {
		return hub.Exit(hub.ExitFailed, "hub geturl: "+err.Error())
	}
	cl, err := client()
	if err != nil {
		return err
	}
	var ans projectAnswer
	req := map[string]any{"dir": dir, "name": c.String("name"), "write": c.Bool("write"), "terminal": c.Bool("terminal"), "bridges": c.Bool("bridges")}
	if err := cl.Do(c.Context, http.MethodPost, "/api/projects", req, &ans); err != nil {
		return refusal(err)
	}
	printProject(c, ans.Project)
	return nil
}

func projectList(c *cli.Context) error {
	if _, err := args(c, 0, "project list [--json]"); err != nil {
		return err
	}
	cl, err := client()
	if err != nil {
		return err
	}
	var ans struct {
		Projects []projectOut `json:"projects"`
	}
	if err := cl.Do(c.Context, http.MethodGet, "/api/projects", nil, &ans); err != nil {
		return refusal(err)
	}
	if c.Bool("json") {
		if ans.Projects == nil {
			ans.Projects = []projectOut{}
		}
		emitJSON(c.App.Writer, ans.Projects)
		return nil
	}
	if len(ans.Projects) == 0 {
		fmt.Fprintln(c.App.ErrWriter, "no projects; add one with `hub geturl project add DIR`")
		return nil
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tWRITE\tTERMINAL\tBRIDGES\tROOT")
	for _, p := range ans.Projects {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, yesNo(p.Write), yesNo(p.Terminal), yesNo(p.Bridges), p.Root)
	}
	return tw.Flush()
}

func projectRemove(c *cli.Context) error {
	pos, err := args(c, 1, "project remove NAME")
	if err != nil {
		return err
	}
	cl, err := client()
	if err != nil {
		return err
	}
	if err := cl.Do(c.Context, http.MethodDelete, "/api/projects/"+url.PathEscape(pos[0]), nil, nil); err != nil {
		return refusal(err)
	}
	if c.Bool("json") {
		emitJSON(c.App.Writer, map[string]any{"name": pos[0], "removed": true})
		return nil
	}
	fmt.Fprintf(c.App.Writer, "project %s removed\n", pos[0])
	return nil
}

func projectSet(c *cli.Context) error {
	pos, err := args(c, 1, "project set NAME [--write=BOOL] [--terminal=BOOL] [--bridges=BOOL] [--root DIR]")
	if err != nil {
		return err
	}
	req := map[string]any{}
	for _, f := range []string{"write", "terminal", "bridges"} {
		if c.IsSet(f) {
			req[f] = c.Bool(f)
		}
	}
	if c.IsSet("root") {
		root, err := filepath.Abs(c.String("root"))
		if err != nil {
			return hub.Exit(hub.ExitFailed, "hub geturl: "+err.Error())
		}
		req["root"] = root
	}
	if len(req) == 0 {
		return hub.Exit(hub.ExitUsage, "hub geturl project set: nothing to change; give --write=BOOL, --terminal=BOOL, --bridges=BOOL or --root DIR")
	}
	cl, err := client()
	if err != nil {
		return err
	}
	var ans projectAnswer
	if err := cl.Do(c.Context, http.MethodPost, "/api/projects/"+url.PathEscape(pos[0]), req, &ans); err != nil {
		return refusal(err)
	}
	printProject(c, ans.Project)
	return nil
}

// refusal prefixes a control-plane refusal for stderr (exit 1); other
// errors already carry their exit code.
func refusal(err error) error {
	if re, ok := err.(*RemoteError); ok {
		return &refused{re.Code, re.Message}
	}
	return err
}

// refused is a control-plane refusal as the CLI reports it.
type refused struct{ code, msg string }

func (r *refused) Error() string { return fmt.Sprintf("hub geturl: %s (%s)", r.msg, r.code) }
func (r *refused) ExitCode() int { return hub.ExitFailed }

type sessionAnswer struct {
	Session SessionInfo `json:"session"`
}

// printSession prints what a new, rotated or started session gives the
// operator: its Init URL and the prompt to hand the agent.
func printSession(c *cli.Context, s SessionInfo) {
	if c.Bool("json") {
		emitJSON(c.App.Writer, struct {
			ID      string `json:"id"`
			Project string `json:"project"`
			InitURL string `json:"initUrl"`
			Prompt  string `json:"prompt"`
		}{s.ID, s.Project, s.InitURL, s.Prompt})
		return
	}
	fmt.Fprintf(c.App.Writer, "session %s (project %s)\nInit URL: %s\n\nPrompt for the agent:\n%s\n", s.ID, s.Project, s.InitURL, s.Prompt)
}

func sessionNew(c *cli.Context) error {
	const usage = "session new --project NAME [--label L]"
	if _, err := args(c, 0, usage); err != nil {
		return err
	}
	// Checked here, not with the flag's Required: urfave/cli answers a
	// missing required flag with the command's help on stdout.
	if c.String("project") == "" {
		return hub.Exit(hub.ExitUsage, "usage: hub geturl "+usage)
	}
	cl, err := client()
	if err != nil {
		return err
	}
	var ans sessionAnswer
	if err := cl.Do(c.Context, http.MethodPost, "/api/sessions", map[string]any{"project": c.String("project"), "label": c.String("label")}, &ans); err != nil {
		return refusal(err)
	}
	printSession(c, ans.Session)
	return nil
}

func sessionList(c *cli.Context) error {
	if _, err := args(c, 0, "session list [--json]"); err != nil {
		return err
	}
	cl, err := client()
	if err != nil {
		return err
	}
	var ans struct {
		Sessions []SessionInfo `json:"sessions"`
	}
	if err := cl.Do(c.Context, http.MethodGet, "/api/sessions", nil, &ans); err != nil {
		return refusal(err)
	}
	if c.Bool("json") {
		type item struct {
			ID      string `json:"id"`
			Project string `json:"project"`
			Label   string `json:"label,omitempty"`
			Enabled bool   `json:"enabled"`
			Live    bool   `json:"live"`
			InitURL string `json:"initUrl,omitempty"`
			Note    string `json:"note,omitempty"`
		}
		out := make([]item, len(ans.Sessions))
		for i, s := range ans.Sessions {
			out[i] = item{s.ID, s.Project, s.Label, s.Enabled, s.Live, s.InitURL, s.Note}
		}
		emitJSON(c.App.Writer, out)
		return nil
	}
	if len(ans.Sessions) == 0 {
		fmt.Fprintln(c.App.ErrWriter, "no sessions; create one with `hub geturl session new --project NAME`")
		return nil
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPROJECT\tSTATE\tLABEL\tINIT URL")
	for _, s := range ans.Sessions {
		state := "stopped"
		switch {
		case s.Live:
			state = "live"
		case s.Enabled:
			state = "down: " + s.Note
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.ID, s.Project, state, s.Label, s.InitURL)
	}
	return tw.Flush()
}

func sessionOpCommand(op, usage string) *cli.Command {
	return &cli.Command{Name: op, Usage: usage, ArgsUsage: "ID", Flags: []cli.Flag{jsonFlag}, Action: func(c *cli.Context) error {
		pos, err := args(c, 1, "session "+op+" ID")
		if err != nil {
			return err
		}
		cl, err := client()
		if err != nil {
			return err
		}
		id := url.PathEscape(pos[0])
		if op == "delete" {
			if err := cl.Do(c.Context, http.MethodDelete, "/api/sessions/"+id, nil, nil); err != nil {
				return refusal(err)
			}
			if c.Bool("json") {
				emitJSON(c.App.Writer, map[string]any{"id": pos[0], "deleted": true})
			} else {
				fmt.Fprintf(c.App.Writer, "session %s deleted\n", pos[0])
			}
			return nil
		}
		var ans sessionAnswer
		if err := cl.Do(c.Context, http.MethodPost, "/api/sessions/"+id+"/"+op, nil, &ans); err != nil {
			return refusal(err)
		}
		if op == "stop" {
			if c.Bool("json") {
				emitJSON(c.App.Writer, map[string]any{"id": ans.Session.ID, "project": ans.Session.Project, "enabled": false})
			} else {
				fmt.Fprintf(c.App.Writer, "session %s stopped; its URLs no longer work\n", ans.Session.ID)
			}
			return nil
		}
		printSession(c, ans.Session)
		return nil
	}}
}

func openCommand() *cli.Command {
	return &cli.Command{
		Name:  "open",
		Usage: "print a one-time login URL for the control page (it logs in the browser tab that opens it; it works once, for two minutes)",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "browser", Usage: "also open it in the default browser ($BROWSER, else xdg-open)"}, jsonFlag},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, "open [--browser]"); err != nil {
				return err
			}
			cl, err := client()
			if err != nil {
				return err
			}
			var ans struct {
				URL string `json:"url"`
			}
			if err := cl.Do(c.Context, http.MethodPost, "/api/login", nil, &ans); err != nil {
				return refusal(err)
			}
			if c.Bool("json") {
				emitJSON(c.App.Writer, map[string]string{"url": ans.URL})
			} else {
				fmt.Fprintln(c.App.Writer, ans.URL)
			}
			if c.Bool("browser") {
				d, err := hub.DirsFromEnv()
				if err == nil {
					err = openBrowser(StateDir(d), ans.URL)
				}
				if err != nil {
					return hub.Exit(hub.ExitFailed, "hub geturl open: cannot open a browser ("+err.Error()+"); open the URL above yourself")
				}
			}
			return nil
		},
	}
}
