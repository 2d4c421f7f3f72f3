package hub

import (
	"context"
	"log/slog"
	"time"
)

// A KeptFile is a file a running process keeps in place: a control,
// session or state file others find it by. A deleted or damaged one would
// otherwise hide a live process from every client until it restarts.
type KeptFile struct {
	// Name says what the file is in log lines ("the state file").
	Name string
	Path string
	// Check says why the file on disk is not what it should be ("" when
	// it is) and how to put it right. A nil fix means the file must be
	// left as it is now (another process's, say): that is logged as an
	// error.
	Check func() (why string, fix func() error)
}

// KeepFiles checks files every interval and puts right what drifted,
// until ctx is done. Something that keeps deleting a file costs a thinned
// log line, not one per check.
func KeepFiles(ctx context.Context, every time.Duration, log *slog.Logger, files ...KeptFile) {
	t := time.NewTicker(every)
	defer t.Stop()
	var thin LogThinner
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, f := range files {
			why, fix := f.Check()
			switch {
			case why == "":
			case fix == nil:
				thin.Log(log, slog.LevelError, "cannot keep "+f.Path, "cannot keep "+f.Name, "path", f.Path, "why", why)
			default:
				if err := fix(); err != nil {
					thin.Log(log, slog.LevelError, "cannot rewrite "+f.Path, "cannot rewrite "+f.Name, "path", f.Path, "why", why, "err", err)
				} else {
					thin.Warn(log, "rewrote "+f.Path, "rewrote "+f.Name, "path", f.Path, "why", why)
				}
			}
		}
	}
}
