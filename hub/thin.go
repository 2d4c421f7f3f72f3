package hub

import (
	"context"
	"log/slog"
	"sync"
)

// WorthLogging reports whether the count-th occurrence of a repeated event
// gets a log line: the 1st, 2nd, 4th, 8th… A flood anyone can cause (a
// page dialling in a loop, prompts dropped while no agent reads them)
// then costs a logarithmic number of lines, while the first of each kind
// is always logged.
func WorthLogging(count int) bool { return count > 0 && count&(count-1) == 0 }

// DefaultThinKeys bounds how many kinds a LogThinner counts.
const DefaultThinKeys = 256

// LogThinner thins repeated log lines by kind (WorthLogging), adding the
// running count to each line it lets through. Its zero value is ready.
type LogThinner struct {
	// MaxKeys bounds the kinds counted (0: DefaultThinKeys). When full,
	// the counts start over, so a flood of distinct kinds costs at most a
	// line per kind per start-over rather than unbounded memory.
	MaxKeys int

	mu     sync.Mutex
	counts map[string]int
}

// Note counts one occurrence of key and returns its count and whether it
// is worth a line.
func (t *LogThinner) Note(key string) (count int, log bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	max := t.MaxKeys
	if max <= 0 {
		max = DefaultThinKeys
	}
	if t.counts == nil {
		t.counts = map[string]int{}
	}
	if _, ok := t.counts[key]; !ok && len(t.counts) >= max {
		clear(t.counts)
	}
	t.counts[key]++
	n := t.counts[key]
	return n, WorthLogging(n)
}

// Log writes msg at level through log when this occurrence of key is worth
// a line, with "count" added; it reports whether it logged.
func (t *LogThinner) Log(log *slog.Logger, level slog.Level, key, msg string, args ...any) bool {
	n, ok := t.Note(key)
	if ok {
		log.Log(context.Background(), level, msg, append(args, "count", n)...)
	}
	return ok
}

// Warn is Log at warn level.
func (t *LogThinner) Warn(log *slog.Logger, key, msg string, args ...any) bool {
	return t.Log(log, slog.LevelWarn, key, msg, args...)
}
