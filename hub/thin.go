package hub

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// WorthLogging reports whether the count-th occurrence of a repeated event
// gets a log line: the 1st, 2nd, 4th, 8th… A flood anyone can cause (a
// page dialling in a loop, prompts dropped while no agent reads them)
// then costs a logarithmic number of lines, while the first of each kind
// is always logged.
func WorthLogging(count int) bool { return count > 0 && count&(count-1) == 0 }

// DefaultThinKeys bounds how many kinds a LogThinner counts.
const DefaultThinKeys = 256

// DefaultThinBurst is how many lines of a kind a summarizing LogThinner
// (Period set) lets through before it starts counting.
const DefaultThinBurst = 3

// LogThinner thins repeated log lines by kind. Its zero value is ready and
// thins logarithmically (WorthLogging), adding the running count to each
// line it lets through. With Period set it summarizes instead: see Log.
type LogThinner struct {
	// MaxKeys bounds the kinds counted (0: DefaultThinKeys). When full,
	// the logarithmic counts start over, so a flood of distinct kinds
	// costs at most a line per kind per start-over rather than unbounded
	// memory; summarized kinds that have gone quiet are forgotten, and
	// lines of further kinds are counted together as one more kind.
	MaxKeys int
	// Burst is how many lines of a kind Log writes in full before it
	// counts them (0: DefaultThinBurst), when Period is set.
	Burst int
	// Period, when set, makes Log summarize: after the Burst lines of a
	// kind, it writes one line per Period saying how many more there
	// were, for as long as they go on; a kind that has not occurred for a
	// whole Period starts over.
	Period time.Duration

	mu     sync.Mutex
	counts map[string]int
	runs   map[string]*thinRun
}

// thinRun is one summarized kind.
type thinRun struct {
	logged     int       // lines written in full since the kind started (over)
	suppressed int       // lines counted since the last summary
	last       time.Time // the kind's latest occurrence
	pending    bool      // a summary is due (its timer is set)
	timer      *time.Timer

	// What the summary says: the first counted line's.
	log   *slog.Logger
	level slog.Level
	msg   string
	args  []any
}

// otherKinds collects the lines of kinds past MaxKeys.
const otherKinds = "\x00other kinds"

func (t *LogThinner) maxKeys() int {
	if t.MaxKeys <= 0 {
		return DefaultThinKeys
	}
	return t.MaxKeys
}

// Note counts one occurrence of key and returns its count and whether it
// is worth a line (logarithmic thinning, whatever Period says).
func (t *LogThinner) Note(key string) (count int, log bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts == nil {
		t.counts = map[string]int{}
	}
	if _, ok := t.counts[key]; !ok && len(t.counts) >= t.maxKeys() {
		clear(t.counts)
	}
	t.counts[key]++
	n := t.counts[key]
	return n, WorthLogging(n)
}

// Log writes msg at level through log when this occurrence of key is worth
// a line, with "count" added, and reports whether it logged. Without a
// Period that is the 1st, 2nd, 4th, 8th… occurrence. With one, it is each
// of the first Burst occurrences (count 1…Burst); later ones are counted,
// and a Period after the first of them a summary is written: msg with the
// args of the first counted line, "suppressed" (how many were counted)
// and "period". While they go on, one summary follows per Period.
func (t *LogThinner) Log(log *slog.Logger, level slog.Level, key, msg string, args ...any) bool {
	if t.Period <= 0 {
		n, ok := t.Note(key)
		if ok {
			log.Log(context.Background(), level, msg, append(args, "count", n)...)
		}
		return ok
	}
	burst := t.Burst
	if burst <= 0 {
		burst = DefaultThinBurst
	}
	now := time.Now()
	t.mu.Lock()
	r := t.run(key, now)
	if r == nil {
		key, r = otherKinds, t.runs[otherKinds]
		if r == nil {
			r = &thinRun{logged: burst} // the kinds differ: no line in full
			t.runs[otherKinds] = r
		}
		msg, args = "repeated log lines of further kinds", nil
	}
	r.last = now
	if r.logged < burst {
		r.logged++
		n := r.logged
		t.mu.Unlock()
		log.Log(context.Background(), level, msg, append(args, "count", n)...)
		return true
	}
	r.suppressed++
	if !r.pending {
		r.pending = true
		r.log, r.level, r.msg, r.args = log, level, msg, append([]any(nil), args...)
		r.timer = time.AfterFunc(t.Period, func() { t.summarize(r) })
	}
	t.mu.Unlock()
	return false
}

// run returns key's run, started (over) when it is new or has been quiet
// for a Period; nil when MaxKeys kinds are being counted already.
func (t *LogThinner) run(key string, now time.Time) *thinRun {
	if t.runs == nil {
		t.runs = map[string]*thinRun{}
	}
	quiet := func(r *thinRun) bool { return !r.pending && now.Sub(r.last) >= t.Period }
	r := t.runs[key]
	if r != nil && !quiet(r) {
		return r
	}
	delete(t.runs, key)
	if len(t.runs) >= t.maxKeys() {
		for k, o := range t.runs {
			if quiet(o) {
				delete(t.runs, k)
			}
		}
		if len(t.runs) >= t.maxKeys() {
			return nil
		}
	}
	r = &thinRun{}
	t.runs[key] = r
	return r
}

// summarize writes r's summary, a Period after its first counted line.
func (t *LogThinner) summarize(r *thinRun) {
	t.mu.Lock()
	n, write := t.takeSummary(r)
	t.mu.Unlock()
	if n > 0 {
		write()
	}
}

// takeSummary returns r's count and the write of its summary, and clears
// them; t.mu is held.
func (t *LogThinner) takeSummary(r *thinRun) (int, func()) {
	n := r.suppressed
	log, level, msg, args := r.log, r.level, r.msg, r.args
	r.suppressed, r.pending, r.log, r.args, r.timer = 0, false, nil, nil, nil
	return n, func() {
		log.Log(context.Background(), level, msg, append(args, "suppressed", n, "period", t.Period)...)
	}
}

// Flush writes every summary that is due, now rather than at the end of
// its Period (its count covers less than a Period then): a server that
// stops calls it so a flood's count is not lost with the process.
func (t *LogThinner) Flush() {
	t.mu.Lock()
	var writes []func()
	for _, r := range t.runs {
		if !r.pending {
			continue
		}
		if r.timer != nil {
			r.timer.Stop()
		}
		if n, write := t.takeSummary(r); n > 0 {
			writes = append(writes, write)
		}
	}
	t.mu.Unlock()
	for _, w := range writes {
		w()
	}
}

// Warn is Log at warn level.
func (t *LogThinner) Warn(log *slog.Logger, key, msg string, args ...any) bool {
	return t.Log(log, slog.LevelWarn, key, msg, args...)
}
