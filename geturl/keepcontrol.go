package geturl

import (
	"context"
	"log/slog"
	"time"

	"github.com/hubdev/hub/hub"
)

// controlCheckInterval is how often a running geturl checks its control
// file (a variable so tests can shorten it).
var controlCheckInterval = 2 * time.Second

// keepControlFile keeps a running geturl findable: every interval it
// rewrites the control file when it is missing, corrupt, unsafe or not the
// one this run wrote. The run holds serve.lock, so no other geturl can own
// the file meanwhile. Without this, a deleted or damaged control.json left
// a live control plane every `hub geturl` command called "not running",
// telling the user to start one while `hub start` said one was. It
// returns when ctx is done.
func keepControlFile(ctx context.Context, d hub.Dirs, cf controlFile, every time.Duration, log *slog.Logger) {
	put := func() error { return writeControlFile(d, cf) }
	hub.KeepFiles(ctx, every, log, hub.KeptFile{Name: "the control file", Path: controlPath(d), Check: func() (string, func() error) {
		got, err := readControlFile(d)
		switch {
		case err != nil:
			return err.Error(), put
		case got.PID != cf.PID || got.Port != cf.Port || got.ControlPort != cf.ControlPort || !hub.SecretEqual(got.Key, cf.Key):
			return "it names another run", put
		}
		return "", nil
	}})
}
