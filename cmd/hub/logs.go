package main

import (
	"context"
	"errors"
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
			path := filepath.Join(dirs.Log, supervisor.LogFileName)
			// A hub that crashed left its report beside the log; with no
			// hub running to bring it in, this reader does (hub.Ingest).
			if !supervisor.LockHeld(dirs.State) {
				ingestInto(path, false)
			}
			f, err := hub.OpenPrivate(path, os.O_RDONLY, 0, false)
			if errors.Is(err, hub.ErrUnsafeFile) {
				return hub.Exit(hub.ExitFailed, "hub: "+err.Error())
			}
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
// until ctx is done; it copies once more on the way out. When the running
// hub rotates its log, f's name then names a new file: what is left of the
// old one is copied, and following goes on in the new one.
func followFile(ctx context.Context, w io.Writer, f *os.File, interval time.Duration) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	path := f.Name()
	var ours *os.File // a file followFile opened itself (the caller closes f)
	defer func() {
		if ours != nil {
			ours.Close()
		}
	}()
	for {
		if _, err := io.Copy(w, f); err != nil {
			return err
		}
		if next := reopenedLog(f, path); next != nil {
			// Lines written to the old file just before it was rotated.
			if _, err := io.Copy(w, f); err != nil {
				next.Close()
				return err
			}
			if ours != nil {
				ours.Close()
			}
			f, ours = next, next
			continue
		}
		select {
		case <-ctx.Done():
			_, err := io.Copy(w, f)
			return err
		case <-tick.C:
		}
	}
}

// reopenedLog returns path opened anew when it no longer names the file f
// reads (the log was rotated), or nil.
func reopenedLog(f *os.File, path string) *os.File {
	cur, err := os.Lstat(path)
	if err != nil {
		return nil // between the rename and the new file: next time
	}
	held, err := f.Stat()
	if err != nil || os.SameFile(held, cur) {
		return nil
	}
	next, err := hub.OpenPrivate(path, os.O_RDONLY, 0, false)
	if err != nil {
		return nil
	}
	return next
}
