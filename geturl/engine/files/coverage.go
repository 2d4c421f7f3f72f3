package files

import (
	"slices"
	"sync"
)

// Coverage is the set of lines of one file version an agent has been shown.
// Pages of a truncated read accumulate while the fingerprint stays the same;
// a different fingerprint starts over. The zero value is empty.
type Coverage struct {
	fingerprint string
	total       int
	spans       [][2]int // sorted, disjoint, non-adjacent, 1-based inclusive
	seen        bool
	// A line too long for one page is read in pieces: partialBytes of
	// line partialLine have been shown from its start (the latest such
	// line only; coverage can only be under-reported).
	partialLine, partialBytes int
}

// maxSpans bounds the memory of a coverage an agent fills with scattered
// one-line reads; past it, only the widest spans are kept (coverage can only
// be under-reported, never over-reported).
const maxSpans = 256

// Observe records that lines from..to (1-based, inclusive) of the version
// with fingerprint fp and total lines were returned. from == 0 records that
// the version was seen without lines (an empty file).
func (c *Coverage) Observe(fp string, total, from, to int) {
	if fp != c.fingerprint || total != c.total {
		*c = Coverage{fingerprint: fp, total: total}
	}
	c.seen = true
	if from < 1 || to < from {
		return
	}
	c.spans = append(c.spans, [2]int{from, to})
	slices.SortFunc(c.spans, func(a, b [2]int) int { return a[0] - b[0] })
	merged := c.spans[:1]
	for _, s := range c.spans[1:] {
		last := &merged[len(merged)-1]
		if s[0] <= last[1]+1 {
			last[1] = max(last[1], s[1])
			continue
		}
		merged = append(merged, s)
	}
	c.spans = merged
	if len(c.spans) > maxSpans {
		slices.SortStableFunc(c.spans, func(a, b [2]int) int { return (b[1] - b[0]) - (a[1] - a[0]) })
		c.spans = c.spans[:maxSpans]
		slices.SortFunc(c.spans, func(a, b [2]int) int { return a[0] - b[0] })
	}
}

// ObserveResult records what a FileResult returned. Directories, failures
// and files too large to count are not recorded. A binary file is shown
// whole as what can be shown of it (kind, size, fingerprint). A line read
// in pieces counts once its pieces, in order from its start, reach its end:
// a page starting inside a line (StartByte) counts that line only when the
// pieces before it were seen, and a clipped line counts only when finished.
func (c *Coverage) ObserveResult(r FileResult) {
	if r.Error != nil || r.Kind != KindFile || r.TotalLines < 0 {
		return
	}
	if r.Binary {
		c.Observe(r.Fingerprint, r.TotalLines, 1, r.TotalLines)
		return
	}
	if r.Fingerprint != c.fingerprint || r.TotalLines != c.total {
		*c = Coverage{fingerprint: r.Fingerprint, total: r.TotalLines}
	}
	from, to := r.StartLine, r.EndLine
	prefixSeen := r.StartByte == 0 || c.lineCovered(from) ||
		(c.partialLine == from && c.partialBytes >= r.StartByte)
	if !prefixSeen {
		from++
	}
	if r.ClippedLine {
		if prefixSeen && r.StartLine == r.EndLine {
			c.partialLine, c.partialBytes = r.StartLine, r.StartByte+len(r.Content)
		}
		to--
	}
	c.Observe(r.Fingerprint, r.TotalLines, from, to)
}

// lineCovered reports whether line n is in an observed span.
func (c *Coverage) lineCovered(n int) bool {
	for _, s := range c.spans {
		if s[0] <= n && n <= s[1] {
			return true
		}
	}
	return false
}

// Complete reports whether every line of version fp has been observed.
func (c *Coverage) Complete(fp string) bool {
	if !c.seen || fp != c.fingerprint || c.total < 0 {
		return false
	}
	if c.total == 0 {
		return true
	}
	return len(c.spans) == 1 && c.spans[0][0] <= 1 && c.spans[0][1] >= c.total
}

// Fingerprint is the version the coverage is about ("" when empty).
func (c *Coverage) Fingerprint() string { return c.fingerprint }

// Total is the line count of that version (-1 when it was too large to
// count).
func (c *Coverage) Total() int { return c.total }

// Missing returns the line spans of the version that have not been
// observed, sorted (nil when the total is unknown or nothing is missing).
func (c *Coverage) Missing() [][2]int {
	if c.total <= 0 {
		return nil
	}
	var out [][2]int
	next := 1
	for _, s := range c.spans {
		if s[0] > next {
			out = append(out, [2]int{next, min(s[0]-1, c.total)})
		}
		next = max(next, s[1]+1)
	}
	if next <= c.total {
		out = append(out, [2]int{next, c.total})
	}
	return out
}

// Spans returns the observed line spans, sorted.
func (c *Coverage) Spans() [][2]int { return slices.Clone(c.spans) }

// Ledger holds the Coverage of every file a session has read, keyed by
// canonical host path (FileResult.Host). It is safe for concurrent use and
// bounded: past maxFiles the least recently recorded file is forgotten,
// which can only make a whole-file overwrite ask for a fresh read.
type Ledger struct {
	mu    sync.Mutex
	files map[string]*ledgerEntry
	tick  uint64
}

type ledgerEntry struct {
	cov  Coverage
	used uint64
}

const maxFiles = 4096

// Record adds every file of a read to the ledger.
func (l *Ledger) Record(res Result) {
	for _, f := range res.Files {
		l.RecordFile(f)
	}
}

// RecordFile adds one file result to the ledger.
func (l *Ledger) RecordFile(f FileResult) {
	if f.Host == "" || f.Error != nil || f.Kind != KindFile || f.TotalLines < 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.files == nil {
		l.files = make(map[string]*ledgerEntry)
	}
	e, ok := l.files[f.Host]
	if !ok {
		if len(l.files) >= maxFiles {
			l.evictOldest()
		}
		e = &ledgerEntry{}
		l.files[f.Host] = e
	}
	l.tick++
	e.used = l.tick
	e.cov.ObserveResult(f)
}

// Complete reports whether the file at host has complete coverage of the
// version with fingerprint fp.
func (l *Ledger) Complete(host, fp string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.files[host]
	return ok && e.cov.Complete(fp)
}

// Lookup returns a copy of the coverage recorded for host, so a refused
// whole-file overwrite can say which version was read and which lines are
// still missing.
func (l *Ledger) Lookup(host string) (Coverage, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.files[host]
	if !ok {
		return Coverage{}, false
	}
	c := e.cov
	c.spans = slices.Clone(c.spans)
	return c, true
}

// Invalidate forgets the coverage of host (after a mutation of it).
func (l *Ledger) Invalidate(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.files, host)
}

// Reset forgets everything.
func (l *Ledger) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.files = nil
}

func (l *Ledger) evictOldest() {
	var oldest string
	var at uint64
	for k, e := range l.files {
		if oldest == "" || e.used < at {
			oldest, at = k, e.used
		}
	}
	delete(l.files, oldest)
}
