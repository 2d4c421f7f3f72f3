package adaptertest

import (
	"bytes"
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
