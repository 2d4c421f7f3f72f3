package main

import (
	"context"
	"time"

	"github.com/hubdev/hub/hub"
)

// keepLog brings a detached hub's log back, every interval, when hub.log
// was deleted or moved aside while the hub runs, as KeepState does for
// hub.json: otherwise the hub wrote on into the deleted file and `hub
// logs` said there was no log, until the next rotation at 10 MiB. A link
// or unsafe file in its place is refused and logging goes on where it
// was; that refusal is not logged, since the log is what it is about.
//
// Stray output of the hub's process (its stdout and stderr, hub.out in
// dir) comes into the log as JSON records at the same pace (hub.Ingest).
func keepLog(ctx context.Context, rf *hub.RotatingFile, dir string, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			rf.Heal()
			hub.Ingest(dir, rf)
		}
	}
}
