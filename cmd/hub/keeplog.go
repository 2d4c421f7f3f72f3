package main

import (
	"github.com/hubdev/hub/hub"
)

// keepLog brings a detached hub's log back, on the hub's FileKeeper, when
// hub.log was deleted or moved aside while the hub runs, as KeepState does
// for hub.json: otherwise the hub wrote on into the deleted file and `hub
// logs` said there was no log, until the next rotation at 10 MiB. A link
// or unsafe file in its place is refused and logging goes on where it
// was; that refusal is not logged, since the log is what it is about.
//
// Stray output of the hub's process (its stdout and stderr, hub.out in
// dir) comes into the log as JSON records at the same pace (hub.Ingest).
// It returns stop, which returns once no check runs any more.
func keepLog(files *hub.FileKeeper, rf *hub.RotatingFile, dir string) (stop func()) {
	return files.Keep(nil, hub.KeptFile{Name: "the log", Path: dir, Check: func() (string, func() error) {
		rf.Heal()
		hub.Ingest(dir, rf)
		return "", nil
	}})
}
