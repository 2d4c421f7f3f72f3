// Package replay is the /z range-fallback store of one session.
//
// The gateway keeps each serialized response it produced (Put) so an agent
// whose URL reader cut the answer short can fetch it again in small pieces
// without re-running anything: by part number (parts of at most PartSize
// bytes, cut on UTF-8 boundaries) or by byte offset and length (moved to
// UTF-8 boundaries). Concatenating the chunks in order reproduces the
// original bytes exactly.
//
// A range answer is plain text: one line "GETMCP_RANGE {json}" with the
// chunk's coordinates, then the chunk itself. The store is bounded (MaxEntries
// responses, MaxBytes in total, the least recently used evicted first) and
// forgets a response TTL after it was last touched; its clock is injected.
package replay
