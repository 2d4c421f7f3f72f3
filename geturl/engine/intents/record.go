package intents

import (
	"encoding/json"
	"time"

	"github.com/hubdev/hub/geturl/fault"
)

// State is where an intent is in its life.
type State string

// The states of spec §5.5.
const (
	Pending   State = "pending"   // recorded, its executor not started yet
	Running   State = "running"   // executing
	Succeeded State = "succeeded" // finished with a result
	Failed    State = "failed"    // finished with a structured error
)

// Finished reports whether s is a final state.
func (s State) Finished() bool { return s == Succeeded || s == Failed }

// Record is a snapshot of one intent. Records are values: the journal
// hands out copies, so a caller can read one without locks.
type Record struct {
	// Call is the call id: auto:<tool>:<hex>, or the agent's call=.
	Call string
	// Tool is the journal tool name ("write", "edit", "apply_patch",
	// "terminal", "plugin").
	Tool string
	// Explicit is set when the agent named the call with call=.
	Explicit bool
	State    State
	// Result is the succeeded intent's answer as JSON.
	Result json.RawMessage
	// Err is the failed intent's structured error, kept whole so a later
	// poll can still say what went wrong and what to do.
	Err *fault.Error
	// Replays counts the requests for this intent after the first (poll
	// requests through /j are not replays).
	Replays int
	// Tag is the caller's: the mutation host keeps the project version the
	// intent finished at, to know whether a terminal replay should offer a
	// repeat.
	Tag uint64
	// Origin is the intent's request as first written (Intent.Origin).
	Origin string
	// Evicted is set when the record itself was dropped to stay within the
	// journal's bounds and only its tombstone remains: the state is known,
	// the result is not.
	Evicted bool

	Created  time.Time
	Started  time.Time // zero until running
	Finished time.Time // zero until finished
}

// size is what a finished record counts against MaxBytes.
func (r *Record) size() int {
	n := len(r.Result) + len(r.Origin) + 128
	if r.Err != nil {
		n += len(r.Err.Detail) + len(r.Err.Hint) + 64
	}
	return n
}
