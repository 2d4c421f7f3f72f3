package intents

// Error codes of the journal, part of the wire contract.
const (
	// CodeCallConflict: an explicit call= id already names an intent with
	// other arguments (or another tool).
	CodeCallConflict = "call_conflict"
	// CodeJournalFull: every record is pending or running and the journal
	// is at its bound; nothing was recorded.
	CodeJournalFull = "journal_full"
	// CodeUnknownCall: /j?call= names no intent of this session
	// generation.
	CodeUnknownCall = "unknown_call"
	// CodeExecutorPanic: the executor failed unexpectedly; the intent is
	// failed and will not run again.
	CodeExecutorPanic = "internal_error"
	// CodeCancelled: the bridge stopped while the intent was pending or
	// running; it is failed and will not run again by itself.
	CodeCancelled = "intent_cancelled"
	// CodeInterrupted: the process stopped while the intent was running
	// (found so in the durable journal after a restart). Whether its side
	// effect happened is unknown; it is failed and never runs again by
	// itself: the agent checks the outcome and fetches the retry URL (a
	// new run=) to run it again on purpose.
	CodeInterrupted = "intent_interrupted"
	// CodeJournalUnavailable: the durable journal could not record the
	// intent as started, so it was not started.
	CodeJournalUnavailable = "journal_unavailable"
)
