package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/supervisor"
)

func stopCommand() *cli.Command {
	return &cli.Command{
		Name:  "stop",
		Usage: "stop the background hub",
		Description: "Asks the hub to shut down through its control endpoint, then falls back to SIGTERM\n" +
			"and finally SIGKILL. Exit status 3 when no hub is running.",
		Flags: []cli.Flag{&cli.DurationFlag{Name: "timeout", Value: 15 * time.Second, Usage: "how long to wait for a graceful stop before SIGTERM",
			DefaultText: "15s, or the hub's lifecycle.shutdown_seconds + 5s when longer"}},
		Action: func(c *cli.Context) error {
			if c.Duration("timeout") < 0 {
				return hub.Exit(hub.ExitUsage, "hub: --timeout must be 0 or more")
			}
			dirs, err := hub.DirsFromEnv()
			if err != nil {
				return hub.Exit(hub.ExitFailed, "hub: "+err.Error())
			}
			st, live, msg := supervisor.Probe(dirs.State)
			if live == supervisor.Unsafe {
				return hub.Exit(hub.ExitFailed, "hub: "+msg)
			}
			if live != supervisor.Running {
				if live == supervisor.Stale && st != nil && !hub.PIDAlive(st.PID) {
					os.Remove(filepath.Join(dirs.State, supervisor.StateFileName))
					msg += " (state file removed)"
				}
				return hub.Exit(hub.ExitNotRunning, "hub: "+msg)
			}
			// Probe verified the pid; each signal verifies it again, since
			// the hub may have exited and its pid been reused meanwhile.
			soft, hard := stopSignals()
			send := func(s stopSignal) {
				if err := supervisor.VerifyHub(dirs.State, st.PID); err != nil {
					fmt.Fprintf(c.App.ErrWriter, "hub: not sending %s to pid %d: %v\n", s.name, st.PID, err)
					return
				}
				s.send(st.PID)
			}
			// Gone means no longer a hub holding the lock: a hub releases
			// it only as it exits.
			gone := func(d time.Duration) bool {
				return waitUntil(d, func() bool { return !hub.PIDAlive(st.PID) || supervisor.VerifyHub(dirs.State, st.PID) != nil })
			}
			how := "gracefully"
			timeout := stopTimeout(c.Duration("timeout"), c.IsSet("timeout"), st.ShutdownSeconds)
			code, _, err := supervisor.ControlCall(c.Context, st, http.MethodPost, "/stop")
			if err != nil || code != http.StatusAccepted {
				if soft == nil {
					// Nothing else asks a Windows hub to stop: end it now.
					fmt.Fprintf(c.App.ErrWriter, "hub: control endpoint refused the stop (%v, status %d); sending %s\n", err, code, hard.name)
					timeout = 0
				} else {
					fmt.Fprintf(c.App.ErrWriter, "hub: control endpoint refused the stop (%v, status %d); sending %s\n", err, code, soft.name)
					send(*soft)
				}
			}
			if !gone(timeout) {
				escalated := false
				if soft != nil {
					how = "with " + soft.name
					fmt.Fprintf(c.App.ErrWriter, "hub: pid %d still running after %s; sending %s\n", st.PID, timeout, soft.name)
					send(*soft)
					escalated = !gone(5 * time.Second)
					if escalated {
						fmt.Fprintf(c.App.ErrWriter, "hub: pid %d ignored %s; sending %s\n", st.PID, soft.name, hard.name)
					}
				} else {
					escalated = true
					if timeout > 0 {
						fmt.Fprintf(c.App.ErrWriter, "hub: pid %d still running after %s; sending %s\n", st.PID, timeout, hard.name)
					}
				}
				if escalated {
					how = "with " + hard.name
					send(hard)
					gone(5 * time.Second)
					supervisor.RemoveStateIfOurs(dirs.State, st.PID)
				}
			}
			fmt.Fprintf(c.App.Writer, "hub stopped (pid %d, %s)\n", st.PID, how)
			return nil
		},
	}
}

// stopSignal is one way `hub stop` ends a hub that its control endpoint
// did not stop, sent only to a pid VerifyHub has just verified.
type stopSignal struct {
	name string // "SIGTERM", in messages
	send func(pid int)
}

// stopTimeout is how long `hub stop` waits for a graceful stop: --timeout
// when given, else 15 s or the hub's shutdown_seconds and 5 s more, which
// ever is longer. SIGTERM during a shutdown kills the hub at once, so it
// never comes before the deadline the hub's config gives its adapters.
func stopTimeout(flag time.Duration, set bool, shutdownSeconds int) time.Duration {
	if grace := time.Duration(shutdownSeconds)*time.Second + 5*time.Second; !set && grace > flag {
		return grace
	}
	return flag
}

// waitExit polls until pid is gone or d passes.
func waitExit(pid int, d time.Duration) bool {
	return waitUntil(d, func() bool { return !hub.PIDAlive(pid) })
}

// waitUntil polls cond until it holds or d passes.
func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}
