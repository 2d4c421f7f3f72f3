package mutation

import (
	"time"

	"github.com/hubdev/hub/geturl/files"
	"github.com/hubdev/hub/geturl/journal"
	"github.com/hubdev/hub/geturl/kernel"
	"github.com/hubdev/hub/geturl/mutate"
	"github.com/hubdev/hub/geturl/staging"
)

// State is one session generation's mutation state: its journal, its
// staged blobs, its read ledger (shared with /r's coverage) and its
// serial-edit tracker. It lives and dies with the generation, so rotation
// forgets all of it.
type State struct {
	Journal *journal.Journal
	Staging *staging.Store
	Ledger  *files.Ledger
	Edits   *mutate.EditTracker
}

// NewState builds a generation's state around its read ledger, on clock
// now (time.Now when nil).
func NewState(ledger *files.Ledger, now func() time.Time) *State {
	if now == nil {
		now = time.Now
	}
	if ledger == nil {
		ledger = &files.Ledger{}
	}
	return &State{
		Journal: journal.New(journal.Options{Now: now}),
		Staging: staging.New(now),
		Ledger:  ledger,
		Edits:   mutate.NewEditTracker(now),
	}
}

// Session is a session generation that can mutate: the kernel's view plus
// its mutation state. session.Generation implements it.
type Session interface {
	kernel.Session
	Mutations() *State
}

// StateOf returns a session's mutation state, if it has one.
func StateOf(s kernel.Session) (*State, bool) {
	ms, ok := s.(Session)
	if !ok {
		return nil, false
	}
	st := ms.Mutations()
	return st, st != nil
}
