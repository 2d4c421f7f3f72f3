package mutation

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/hubdev/hub/geturl/engine/intents"
	"github.com/hubdev/hub/geturl/engine/terminal"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// MaxTimeoutSeconds bounds timeout= on /x (the terminal's own maximum).
const MaxTimeoutSeconds = 600

// TerminalSpec is /x: the command (raw tail, a staged blob or command=),
// where it starts (cwd=, default the project root), bg=1 for a
// startup-verified background launch, and timeout= in seconds for a
// foreground command (default 120, at most 600).
var TerminalSpec = &transport.Spec{
	Route: "/x",
	Params: append([]transport.Param{
		{Name: "command", Aliases: []string{"cmd"}},
		blobParam("blob"), countParam("count"),
		{Name: "cwd"},
		{Name: "bg", Kind: transport.Bool},
		{Name: "timeout", Kind: transport.Int, Min: 1, Max: MaxTimeoutSeconds, Clamp: true},
	}, journalControls()...),
	Raw: true, RawMeaning: "the shell command",
	Groups: []transport.Group{
		{Names: []string{"raw", "blob", "command"}, Code: transport.CodeConflictingContent, Required: true},
		callOrRun,
	},
	Requires: [][2]string{{"count", "blob"}},
	Validate: func(a *transport.Args) *transport.Error { return bgWithTimeout(a) },
}

// bgWithTimeout refuses bg=1 with timeout=: a background launch has no
// timeout. It is part of binding, so no repair URL leads to it.
func bgWithTimeout(a *transport.Args) *transport.Error {
	if bg, _ := a.Bool("bg"); bg && a.Has("timeout") {
		return &transport.Error{Code: transport.CodeConflictingParams, Detail: "bg=1 and timeout together",
			Hint: "a background launch has no timeout (its startup is watched, then it runs until stopped); drop timeout=", Retryable: true,
			Action: fault.ActionCorrectRequest}
	}
	return nil
}

// CodeTerminalUnavailable: no terminal engine is wired.
const CodeTerminalUnavailable = "terminal_unavailable"

// Terminal answers /x. The command is the intent (with its resolved cwd,
// bg and timeout); a replay never runs it again, and once the project has
// changed since it ran, the replay's answer offers a repeat URL.
func (h *Host) Terminal(ctx context.Context, c *route.Call) (any, *transport.Error) {
	st, terr := prepare(c, "terminal")
	if terr != nil {
		return nil, terr
	}
	mgr := h.terminalManager()
	if mgr == nil {
		return nil, &transport.Error{Code: CodeTerminalUnavailable, Detail: "the terminal is not enabled in this bridge"}
	}
	sc := c.Session.Scope()
	cwd := "/project"
	if c.Args.Has("cwd") {
		p, err := sc.ResolveExisting(c.Args.Text("cwd"))
		if err != nil {
			return nil, pathRefusal(sc, c.Args.Text("cwd"), err)
		}
		cwd = p.Virtual
	}
	cmd, terr := content(c, st, "blob", "count", "command", "raw")
	if terr != nil {
		return nil, terr
	}
	bg, _ := c.Args.Bool("bg") // bg=1 with timeout= never binds (bgWithTimeout)
	args := map[string]any{"command": cmd, "cwd": cwd, "bg": bg}
	req := terminal.Request{Command: cmd, Cwd: cwd}
	if n, ok := c.Args.Int("timeout"); ok {
		args["timeout"] = n
		req.Timeout = time.Duration(n) * time.Second
	}
	runner := st.runner(mgr, sc)
	return h.journaled(ctx, c, st, intents.Intent{
		Tool: toolTerminal, Args: args,
		Exec: func(ctx context.Context, run *intents.Run) (any, *fault.Error) {
			if bg {
				return launch(ctx, run, runner, req)
			}
			return runForeground(ctx, run, runner, req)
		},
	})
}

// runForeground runs a command to its end (exit or timeout) under the
// execution's context: the bridge stopping kills it, a dropped request
// does not. Any exit status is a result; only a command that could not run
// (refused, no slot, canceled) fails the intent.
func runForeground(ctx context.Context, run *intents.Run, r *terminal.Runner, req terminal.Request) (any, *fault.Error) {
	job, err := r.Start(ctx, req)
	if err != nil {
		return nil, terminalErr(err)
	}
	select {
	case <-job.Started(): // left the machine-wide queue
		run.Running()
	case <-job.Done():
	}
	<-job.Done()
	res, err := job.Result()
	if err != nil {
		return nil, terminalErr(err)
	}
	return res, nil
}

// launch starts a background command and answers its startup. One that
// died during startup fails the intent, its transcript kept; its answer
// offers the foreground form of the same request as the repair URL
// (foregroundRepair).
func launch(ctx context.Context, run *intents.Run, r *terminal.Runner, req terminal.Request) (any, *fault.Error) {
	job, err := r.Launch(ctx, req)
	if err != nil {
		return nil, terminalErr(err)
	}
	run.Running()
	<-job.Done()
	res, err := job.Result()
	if err != nil {
		return nil, terminalErr(err)
	}
	if te := res.Err(); te != nil {
		e := te.Fault()
		e.With("startupTranscript", res.StartupTranscript).With("detectedUrls", res.DetectedURLs).With("detectedPorts", res.DetectedPorts)
		if res.ExitCode != nil {
			e.With("exitCode", *res.ExitCode)
		}
		if res.Signal != "" {
			e.With("signal", res.Signal)
		}
		return nil, e
	}
	return res, nil
}

// foregroundRepair is the repair URL a background launch that died during
// startup offers: the same request without bg=, and without call= too
// (the foreground form is another intent, and an explicit id already
// names this one: call_conflict). "" for any other failure.
func foregroundRepair(c *route.Call, rec intents.Record) string {
	if rec.Tool != toolTerminal || rec.Err.Code != terminal.CodeBackgroundStartFailed || rec.Origin == "" {
		return ""
	}
	return c.Bases.Mutation + withoutParams(rec.Origin, "bg", "call")
}

func terminalErr(err error) *fault.Error {
	var te *terminal.Error
	if errors.As(err, &te) {
		return te.Fault()
	}
	return &fault.Error{Code: terminal.CodeSpawnFailed, Detail: "the command could not run", Retryable: true, Action: fault.ActionRetryLater}
}

// withoutParams removes every parameter called one of names from a
// request written from its route on, keeping the rest byte for byte.
func withoutParams(o string, names ...string) string {
	route, query, _ := strings.Cut(o, "?")
	t, err := transport.ParseTarget(route + "?" + query)
	if err != nil {
		return o
	}
	return t.Rewrite(route, func(key string) bool { return slices.Contains(names, key) }, "")
}
