package channel

// Stage names a connection records on its threads' traces; the trace reads
// them to settle a thread's state (processors name their other stages).
const (
	// StageRejected: a frame of the thread was rejected (detail: the error).
	StageRejected = "rejected"
	// StageClosed: the thread closed (fin handled); it sent what it had.
	StageClosed = "closed"
	// StageAbandoned: the connection dropped before the thread closed.
	StageAbandoned = "abandoned"
	// StageCancelled: the turn was cancelled and lowers to nothing.
	StageCancelled = "cancelled"
)

// Blob is the trace detail a processor records when it stored an
// attachment in its thread's trace blob directory. The trace remembers the
// file and hands the /debug viewer an opaque key for it, so the viewer can
// preview the bytes without ever naming a path.
type Blob struct {
	ID    string `json:"id"`   // the attachment id (shot_N, seg_N)
	Mime  string `json:"mime"` // as the client declared it
	Path  string `json:"path"` // absolute; written by the processor, never by the client
	Bytes int64  `json:"bytes"`
}
