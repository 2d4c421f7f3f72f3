package hub

import (
	"context"
	"log/slog"
	"time"
)

// KeepFile keeps in place a file a running process owns (a control or
// session file others find it by): every interval, drift says why the
// file on disk is not what it should be ("" when it is), and put writes
// it again. A deleted or damaged file would otherwise hide a live process
// from every client until it restarts. Something that keeps deleting the
// file costs a thinned log line, not one per check. KeepFile returns when
// ctx is done.
func KeepFile(ctx context.Context, every time.Duration, log *slog.Logger, path string, drift func() string, put func() error) {
	t := time.NewTicker(every)
	defer t.Stop()
	var thin LogThinner
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		why := drift()
		if why == "" {
			continue
		}
		if err := put(); err != nil {
			thin.Log(log, slog.LevelError, "cannot rewrite", "cannot rewrite "+path, "why", why, "err", err)
			continue
		}
		thin.Warn(log, "rewrote", "rewrote "+path, "why", why)
	}
}
