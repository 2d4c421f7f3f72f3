package geturl

import (
	"sync"
	"time"
)

// maxActivity bounds the recent-activity list the control page shows.
const maxActivity = 200

// activityEntry is one authenticated agent request, as the operator sees
// it: which tool, how it went, how long it took, whether it was a replay —
// never its content, its query values or its token.
type activityEntry struct {
	At         time.Time `json:"at"`
	Session    string    `json:"session,omitempty"`
	Capability string    `json:"capability"`
	Route      string    `json:"route"`
	Tool       string    `json:"tool,omitempty"`
	Status     int       `json:"status"`
	ErrorCode  string    `json:"errorCode,omitempty"`
	DurationMS float64   `json:"durationMs"`
	Bytes      int       `json:"bytes"`
	// Call is a journaled request's call id (a digest of the operation,
	// not its content); Replayed says it found the intent already there
	// and ran nothing.
	Call     string `json:"call,omitempty"`
	Replayed bool   `json:"replayed,omitempty"`
}

// activityLog is a ring of the most recent entries.
type activityLog struct {
	mu   sync.Mutex
	ring []activityEntry
	next int
	full bool
}

func newActivityLog() *activityLog { return &activityLog{ring: make([]activityEntry, maxActivity)} }

func (l *activityLog) add(e activityEntry) {
	l.mu.Lock()
	l.ring[l.next] = e
	l.next = (l.next + 1) % len(l.ring)
	l.full = l.full || l.next == 0
	l.mu.Unlock()
}

// recent returns the entries, newest first.
func (l *activityLog) recent() []activityEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.next
	if l.full {
		n = len(l.ring)
	}
	out := make([]activityEntry, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, l.ring[(l.next-i+len(l.ring))%len(l.ring)])
	}
	return out
}
