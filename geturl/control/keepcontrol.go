package control

import (
	"context"
	"log/slog"
	"time"

	"github.com/hubdev/hub/hub"
)

// CheckInterval is how often a running geturl checks its control
// file (a variable so tests can shorten it).
var CheckInterval = 2 * time.Second

// KeepFile keeps a running geturl findable: on k (or, when k is nil,
// every interval) it
// rewrites the control file when it is missing, corrupt, unsafe or not the
// one this run wrote. The run holds serve.lock, so no other geturl can own
// the file meanwhile. Without this, a deleted or damaged control.json left
// a live control plane every `hub geturl` command called "not running",
// telling the user to start one while `hub start` said one was. It
// returns when ctx is done.
func KeepFile(ctx context.Context, k *hub.FileKeeper, d hub.Dirs, cf File, every time.Duration, log *slog.Logger) {
	put := func() error { return WriteFile(d, cf) }
	hub.KeepFiles(ctx, k, every, log, hub.KeptFile{Name: "the control file", Path: FilePath(d), Check: func() (string, func() error) {
		got, err := ReadFile(d)
		switch {
		case err != nil:
			return err.Error(), put
		case got.PID != cf.PID || got.Port != cf.Port || got.ControlPort != cf.ControlPort || !hub.SecretEqual(got.Key, cf.Key):
			return "it names another run", put
		}
		return "", nil
	}})
}
