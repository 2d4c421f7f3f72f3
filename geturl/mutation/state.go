package mutation

import (
	"context"
	"sync"
	"time"

	"github.com/hubdev/hub/geturl/engine/filechange"
	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/engine/intents"
	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/engine/staging"
	"github.com/hubdev/hub/geturl/engine/terminal"
	"github.com/hubdev/hub/geturl/route"
)

// State is one session generation's mutation state: its journal, its
// staged blobs, its read ledger (shared with /r's coverage) and its
// serial-edit tracker. It lives and dies with the generation, so rotation
// forgets all of it.
type State struct {
	Journal *intents.Journal
	Staging *staging.Store
	Ledger  *files.Ledger
	Edits   *filechange.EditTracker

	// ended is done once the generation has ended: its intents, queued or
	// running, end with it (see Host.spawn).
	ended  context.Context
	endNow context.CancelFunc

	mu     sync.Mutex
	termOf *terminal.Manager // the manager term belongs to
	term   *terminal.Runner  // this generation's terminal (its background processes)
}

// runner is the generation's terminal on m (a new one after a restart
// made a new manager).
func (s *State) runner(m *terminal.Manager, scope *sandbox.Scope) *terminal.Runner {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.term == nil || s.termOf != m {
		s.term, s.termOf = m.Runner(scope), m
	}
	return s.term
}

// Close ends the generation's intents (a queued one never starts, a
// running command is killed) and stops its background processes: it has
// ended, its URLs, and so the only handles on that work, are gone, and it
// may have ended because the operator took a permission away.
func (s *State) Close(ctx context.Context) error {
	s.endNow()
	s.mu.Lock()
	r := s.term
	s.term, s.termOf = nil, nil
	s.mu.Unlock()
	if r == nil {
		return nil
	}
	return r.Close(ctx)
}

// NewState builds a generation's state around its read ledger, on clock
// now (time.Now when nil), with a journal kept in memory.
func NewState(ledger *files.Ledger, now func() time.Time) *State {
	if now == nil {
		now = time.Now
	}
	return NewStateWith(ledger, now, intents.New(intents.Options{Now: now}))
}

// NewStateWith is NewState around a journal the caller made: a durable
// one (intents.Create, or intents.Load after a restart), so the
// generation's mutation URLs keep their intents across processes.
func NewStateWith(ledger *files.Ledger, now func() time.Time, journal *intents.Journal) *State {
	if now == nil {
		now = time.Now
	}
	if ledger == nil {
		ledger = &files.Ledger{}
	}
	ended, endNow := context.WithCancel(context.Background())
	return &State{
		ended: ended, endNow: endNow,
		Journal: journal,
		Staging: staging.New(now),
		Ledger:  ledger,
		Edits:   filechange.NewEditTracker(now),
	}
}

// Session is a session generation that can mutate: the kernel's view plus
// its mutation state. session.Generation implements it.
type Session interface {
	route.Session
	Mutations() *State
}

// StateOf returns a session's mutation state, if it has one.
func StateOf(s route.Session) (*State, bool) {
	ms, ok := s.(Session)
	if !ok {
		return nil, false
	}
	st := ms.Mutations()
	return st, st != nil
}
