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
	t := time.NewTicker(every)
	defer t.Stop()
	// Something that keeps deleting the file must not cost a line every
	// interval for as long as the bridge runs.
	var thin hub.LogThinner
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		got, err := readControlFile(d)
		if err == nil && got.PID == cf.PID && got.Port == cf.Port && got.ControlPort == cf.ControlPort && hub.SecretEqual(got.Key, cf.Key) {
			continue
		}
		why := "it names another run"
		if err != nil {
			why = err.Error()
		}
		if werr := writeControlFile(d, cf); werr != nil {
			thin.Log(log, slog.LevelError, "control", "cannot rewrite the control file", "path", controlPath(d), "why", why, "err", werr)
			continue
		}
		thin.Warn(log, "control rewritten", "rewrote the control file", "path", controlPath(d), "why", why)
	}
}
