package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
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
		Flags: []cli.Flag{&cli.DurationFlag{Name: "timeout", Value: 15 * time.Second, Usage: "how long to wait for a graceful stop before SIGTERM"}},
		Action: func(c *cli.Context) error {
			dirs, err := hub.DirsFromEnv()
			if err != nil {
				return hub.Exit(hub.ExitFailed, "hub: "+err.Error())
			}
			st, live, msg := supervisor.Probe(dirs.State)
			if live != supervisor.Running {
				if live == supervisor.Stale && st != nil && !hub.PIDAlive(st.PID) {
					os.Remove(filepath.Join(dirs.State, supervisor.StateFileName))
					msg += " (state file removed)"
				}
				return hub.Exit(hub.ExitNotRunning, "hub: "+msg)
			}
			how := "gracefully"
			code, _, err := supervisor.ControlCall(c.Context, st, http.MethodPost, "/stop")
			if err != nil || code != http.StatusAccepted {
				fmt.Fprintf(c.App.ErrWriter, "hub: control endpoint refused the stop (%v, status %d); sending SIGTERM\n", err, code)
				syscall.Kill(st.PID, syscall.SIGTERM)
			}
			if !waitExit(st.PID, c.Duration("timeout")) {
				how = "with SIGTERM"
				fmt.Fprintf(c.App.ErrWriter, "hub: pid %d still running after %s; sending SIGTERM\n", st.PID, c.Duration("timeout"))
				syscall.Kill(st.PID, syscall.SIGTERM)
				if !waitExit(st.PID, 5*time.Second) {
					how = "with SIGKILL"
					fmt.Fprintf(c.App.ErrWriter, "hub: pid %d ignored SIGTERM; sending SIGKILL\n", st.PID)
					syscall.Kill(st.PID, syscall.SIGKILL)
					waitExit(st.PID, 5*time.Second)
					supervisor.RemoveStateIfOurs(dirs.State, st.PID)
				}
			}
			fmt.Fprintf(c.App.Writer, "hub stopped (pid %d, %s)\n", st.PID, how)
			return nil
		},
	}
}

// waitExit polls until pid is gone or d passes.
func waitExit(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !hub.PIDAlive(pid) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}
