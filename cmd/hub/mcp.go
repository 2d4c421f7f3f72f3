package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/mcpserver"
	"github.com/hubdev/hub/hubmcp"
)

func mcpCommand(reg *adapters.Registry) *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "one MCP server (stdio) for every bridge of the hub: claude mcp add hub -- hub mcp",
		Description: "Serves MCP on stdin/stdout (nothing else is written to stdout). It attaches to the\n" +
			"running hub, or starts one in the background (as `hub start` does, with --config)\n" +
			"when none runs, and holds it alive while attached; it never stops a hub. Tools:\n" +
			"hub_status, and the tools of every bridge the hub runs (" + strings.Join(faceNames(reg), ", ") + ";\n" +
			"the server's instructions say which are whose); hub_status says why a bridge offers none.",
		Flags: []cli.Flag{configFlag, &cli.StringFlag{Name: "log-level", Value: "info", Usage: "stderr log level: debug, info, warn or error"}},
		Action: func(c *cli.Context) error {
			dirs, err := hub.DirsFromEnv()
			if err != nil {
				return hub.Exit(hub.ExitFailed, "hub mcp: "+err.Error())
			}
			log, err := hub.NewLogger(os.Stderr, hub.LogOptions{Level: c.String("log-level")})
			if err != nil {
				return hub.Exit(hub.ExitUsage, "hub mcp: --log-level "+err.Error())
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cwd, _ := os.Getwd()
			configFlag := c.String("config")
			err = hubmcp.Run(ctx, mcpserver.Stdio(), hubmcp.Options{
				Dirs: dirs, Log: log, Version: versionString(), CWD: cwd, Registry: reg,
				StartHub: func(context.Context) error { return startForMCP(configFlag, dirs, log) },
			})
			if err != nil {
				return hub.Exit(hub.ExitFailed, "hub mcp: "+err.Error())
			}
			return nil
		},
	}
}

// startForMCP is `hub start` for hub mcp: the same detached hub, its
// outcome logged on stderr (stdout is the protocol).
func startForMCP(configFlag string, dirs hub.Dirs, log *slog.Logger) error {
	msg, run, err := startDetached(configFlag, dirs, hub.DefaultLogMaxSize)
	if err != nil {
		// The error names each adapter's cause and fix; the log lines
		// go to this server's log, not into the agent's answer.
		if tail := run.tail(20); tail != "" {
			log.Error("the hub did not start", "err", err, "log", run.path, "lines", tail)
			return fmt.Errorf("%w (this run's lines: %s)", err, run.path)
		}
		return err
	}
	log.Info("started a hub in the background", "pid", msg.PID, "log", run.path)
	if failed := failedAdapters(msg.Adapters); len(failed) > 0 {
		log.Warn("the hub started without some adapters; it retries them, and hub_status says why", "failed", strings.Join(failed, ","))
	}
	return nil
}

// faceNames are the bridges with a part in `hub mcp`, in its order.
func faceNames(reg *adapters.Registry) []string {
	var out []string
	for _, f := range reg.Factories() {
		if f.Face != nil {
			out = append(out, f.Name)
		}
	}
	return out
}
