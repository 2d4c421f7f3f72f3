package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/supervisor"
)

func logsCommand() *cli.Command {
	return &cli.Command{
		Name:  "logs",
		Usage: "print the background hub's log (JSON lines)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing new lines until interrupted"},
			&cli.IntFlag{Name: "lines", Aliases: []string{"n"}, Value: 50, Usage: "print the last `N` lines"},
		},
		Action: func(c *cli.Context) error {
			if c.Int("lines") < 0 {
				return hub.Exit(hub.ExitUsage, "hub: --lines must be 0 or more")
			}
			dirs, err := hub.DirsFromEnv()
			if err != nil {
				return hub.Exit(hub.ExitFailed, "hub: "+err.Error())
			}
			path := filepath.Join(dirs.State, supervisor.LogFileName)
			f, err := os.Open(path)
			if err != nil {
				return hub.Exit(hub.ExitNotRunning, fmt.Sprintf("hub: no log yet at %s (the log is written by hub start)", path))
			}
			defer f.Close()
			lines, err := lastLines(f, c.Int("lines"))
			if err != nil {
				return hub.Exit(hub.ExitFailed, "hub: "+err.Error())
			}
			for _, l := range lines {
				fmt.Fprintln(c.App.Writer, l)
			}
			if !c.Bool("follow") {
				return nil
			}
			// lastLines left the offset where its read ended, so nothing
			// appended since is skipped.
			ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			if err := followFile(ctx, c.App.Writer, f, 200*time.Millisecond); err != nil {
				return hub.Exit(hub.ExitFailed, "hub: "+err.Error())
			}
			return nil
		},
	}
}

// followFile copies what is appended to f into w, checking every interval,
// until ctx is done; it copies once more on the way out.
func followFile(ctx context.Context, w io.Writer, f *os.File, interval time.Duration) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if _, err := io.Copy(w, f); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			_, err := io.Copy(w, f)
			return err
		case <-tick.C:
		}
	}
}
