package filechange

import (
	"crypto/sha256"
	"sync"
	"time"
)

// Serial-edit detection (spec §Route mutations by shape): this many
// distinct successful edits within the window make an edit's result
// suggest one bulk patch instead.
const (
	SerialEditCount  = 3
	SerialEditWindow = 30 * time.Second
)

// EfficiencyHint is the advice carried with SuggestedBulkPatch.
const EfficiencyHint = "several /e edits in a row: batch the remaining already-known related changes into one /a apply_patch call; the edits already made stay valid"

// EditTracker watches one session generation's successful edits for the
// serial-edit pattern. The caller keeps one per session generation and
// hands it to the Engine; it is safe for concurrent use. The zero value
// uses the wall clock.
type EditTracker struct {
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	mu     sync.Mutex
	recent []editMark // successful edits, oldest first, none older than the window
}

type editMark struct {
	at  time.Time
	key [16]byte
}

// NewEditTracker returns a tracker on the given clock (nil: time.Now).
func NewEditTracker(now func() time.Time) *EditTracker { return &EditTracker{Now: now} }

// Note records a successful edit identified by key (the same key twice is
// one edit: a deliberate repeat is not a serial loop) and reports whether
// the session has now made SerialEditCount distinct edits within
// SerialEditWindow.
func (t *EditTracker) Note(key string) bool {
	if t == nil {
		return false
	}
	now := time.Now
	if t.Now != nil {
		now = t.Now
	}
	at := now()
	sum := sha256.Sum256([]byte(key))
	k := [16]byte(sum[:16])
	t.mu.Lock()
	defer t.mu.Unlock()
	keep := t.recent[:0]
	for _, m := range t.recent {
		if at.Sub(m.at) < SerialEditWindow && m.key != k {
			keep = append(keep, m)
		}
	}
	t.recent = append(keep, editMark{at: at, key: k})
	return len(t.recent) >= SerialEditCount
}

// Reset forgets the edits seen so far (after a bulk patch, the loop is
// broken).
func (t *EditTracker) Reset() {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.recent = nil
	t.mu.Unlock()
}
