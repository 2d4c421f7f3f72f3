package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/supervisor"
)

// statusDoc is the control endpoint's GET /status body and `status --json`.
type statusDoc struct {
	supervisor.State
	Running bool   `json:"running"`
	Stale   bool   `json:"stale,omitempty"`
	Message string `json:"message,omitempty"`
	// Unavailable is hub.Unavailable of the OS the hub runs on: what it
	// cannot do there (none on Linux).
	Unavailable []string `json:"unavailable,omitempty"`
}

// absentDoc is `status --json` when no verified hub answers: only what is
// known, not a running hub's fields at their zero values (a "started" of
// year 1, "adapters": null).
type absentDoc struct {
	PID     int    `json:"pid,omitempty"`
	Running bool   `json:"running"`
	Stale   bool   `json:"stale,omitempty"`
	Message string `json:"message"`
}

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show every adapter: state, ports, page attached, agents, restarts",
		Description: "Exit status: 0 the hub is running; 3 it is not running or its state file is stale\n" +
			"(the message says which); 1 it runs but its control endpoint does not answer.",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print machine-readable JSON on stdout"}},
		Action: func(c *cli.Context) error {
			dirs, err := hub.DirsFromEnv()
			if err != nil {
				return hub.Exit(hub.ExitFailed, "hub: "+err.Error())
			}
			st, live, msg := supervisor.Probe(dirs.State)
			if live == supervisor.Unsafe {
				// Nothing in a file another user could have planted is
				// shown: not its pid, not the table its endpoint serves.
				if c.Bool("json") {
					writeJSON(c.App.Writer, absentDoc{Message: msg})
				}
				return hub.Exit(hub.ExitFailed, "hub: "+msg)
			}
			if live != supervisor.Running {
				if c.Bool("json") {
					doc := absentDoc{Running: false, Stale: live == supervisor.Stale, Message: msg}
					if st != nil {
						doc.PID = st.PID
					}
					writeJSON(c.App.Writer, doc)
				}
				return hub.Exit(hub.ExitNotRunning, "hub: "+msg)
			}
			doc, err := fetchStatus(c.Context, st)
			if err != nil {
				// A verified hub holds the lock, so something runs: the
				// failure is its endpoint's (1), not "nothing running" (3),
				// and --json still answers with a document.
				if c.Bool("json") {
					writeJSON(c.App.Writer, statusDoc{State: supervisor.State{PID: st.PID, Control: st.Control, Started: st.Started}, Running: true, Message: err.Error()})
				}
				return hub.Exit(hub.ExitFailed, "hub: "+err.Error())
			}
			if c.Bool("json") {
				writeJSON(c.App.Writer, doc)
				return nil
			}
			printStatus(c.App.Writer, doc, time.Now())
			return nil
		},
	}
}

func fetchStatus(ctx context.Context, st *supervisor.State) (*statusDoc, error) {
	code, body, err := supervisor.ControlCall(ctx, st, http.MethodGet, "/status")
	if err != nil {
		return nil, fmt.Errorf("pid %d is running but its control endpoint does not answer: %v", st.PID, err)
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("control endpoint answered %d: %s", code, strings.TrimSpace(string(body)))
	}
	var doc statusDoc
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("control endpoint sent bad JSON: %v", err)
	}
	return &doc, nil
}

func writeJSON(w io.Writer, v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintf(w, "%s\n", b)
}

// printStatus renders the human table.
func printStatus(w io.Writer, doc *statusDoc, now time.Time) {
	fmt.Fprintf(w, "hub running (pid %d, up %s, version %s, config: %s)\n", doc.PID, now.Sub(doc.Started).Round(time.Second), cmp.Or(doc.Version, "unknown"), doc.Config)
	printAdapters(w, doc.Adapters, now)
	for _, u := range doc.Unavailable {
		fmt.Fprintf(w, "not on this OS: %s\n", u)
	}
}

func printAdapters(w io.Writer, list []adapters.Status, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ADAPTER\tSTATE\tPORTS\tPAGE\tAGENTS\tLAST ACTIVITY\tRESTARTS\tNOTE")
	for _, a := range list {
		ports, page, last := "-", "no", "-"
		if len(a.Ports) > 0 {
			ports = hub.FormatPorts(a.Ports)
		}
		if a.PageAttached {
			page = "yes"
		}
		if !a.LastActivity.IsZero() {
			last = now.Sub(a.LastActivity).Round(time.Second).String() + " ago"
		}
		note := a.Note
		if a.Sessions > 0 {
			note = strings.TrimSuffix(fmt.Sprintf("%d sessions enabled; ", a.Sessions)+note, "; ")
		}
		if a.LastError != "" && (a.State == adapters.StateFailed || a.State == adapters.StateRestarting) {
			note = strings.TrimSpace(note + " last error: " + a.LastError)
		}
		if a.Fix != "" {
			note += "; fix: " + a.Fix
		}
		if !a.RetryAt.IsZero() {
			note += "; " + retryNote(a.RetryAt.Sub(now))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%d\t%s\n", a.Name, a.State, ports, page, a.AgentSessions, last, a.Restarts, note)
	}
	tw.Flush()
}

// retryNote says when a failed adapter is tried again, d from now: in
// whole seconds, or "retrying now" in the last second (a retry due is one
// that is under way, and "in 0s" read as a stuck countdown).
func retryNote(d time.Duration) string {
	if d < time.Second {
		return "retrying now"
	}
	return "retrying in " + d.Round(time.Second).String()
}

// runningHub is adapters.RunningHub for every command: the adapters of
// the hub running for this user, asked through its control endpoint; none
// when no hub runs. Whether a hub runs, and which, is checked on every
// call (its state file and lock); the same hub's answer is reused for
// statusReuse, because one geturl /k listing beside a hub asks for it ten
// times within a few milliseconds.
type runningHub struct {
	mu       sync.Mutex
	pid      int // which hub gave the last answer
	key      string
	at       time.Time
	adapters []adapters.Status // its last answer
}

// statusReuse is how long the running hub's answer is reused.
const statusReuse = 50 * time.Millisecond

// Adapters implements adapters.RunningHub.
func (h *runningHub) Adapters(ctx context.Context) ([]adapters.Status, error) {
	dirs, err := hub.DirsFromEnv()
	if err != nil {
		return nil, err
	}
	st, live, _ := supervisor.Probe(dirs.State)
	if live != supervisor.Running {
		return nil, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pid == st.PID && hub.SecretEqual(h.key, st.Key) && time.Since(h.at) < statusReuse {
		return slices.Clone(h.adapters), nil
	}
	doc, err := fetchStatus(ctx, st)
	if err != nil {
		return nil, err
	}
	h.pid, h.key, h.at, h.adapters = st.PID, st.Key, time.Now(), doc.Adapters
	return slices.Clone(doc.Adapters), nil
}
