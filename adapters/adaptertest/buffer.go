package adaptertest

import (
	"bytes"
	"strings"
	"sync"
)

// SyncBuffer is a bytes.Buffer safe for one writer goroutine (a child's
// stderr, a follower's output) and a reading test at the same time.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TakeLines returns the lines written so far and forgets them: a log sink
// a timer may write to while the test reads it in rounds.
func (s *SyncBuffer) TakeLines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	text := strings.TrimSpace(s.b.String())
	s.b.Reset()
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}
