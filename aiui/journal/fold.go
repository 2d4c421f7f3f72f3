package journal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/hubdev/hub/hub"
)

// sync brings the view up to date with the files on disk. Caller holds
// the lock.
func (j *Journal) sync() error {
	fi, err := os.Stat(j.path)
	if err != nil || j.h == nil || !os.SameFile(fi, j.fi) || fi.Size() < j.end {
		return j.reload()
	}
	if fi.Size() > j.end {
		j.ingest(fi.Size())
	}
	pfi, err := os.Stat(j.prevPath())
	switch {
	case err == nil && (j.prev == nil || !os.SameFile(pfi, j.prevFi)):
		return j.reload() // another process rotated
	case err != nil && j.prev != nil:
		// another process deleted prev once none of its prompts was live,
		// which the drop lines just folded in say too
		if len(j.entries) > 0 && j.entries[0].h == j.prev {
			return j.reload()
		}
		j.dropPrev()
	}
	return nil
}

// reload reopens the files and rebuilds the view from their first bytes:
// prev (if a rotation left one), then the head. A head that starts with
// a base line was compacted from both, so prev is stale: a crash cut that
// compaction short before it deleted prev, which is deleted now.
func (j *Journal) reload() error {
	j.dropPrev()
	if j.h != nil {
		j.h.release()
		j.h = nil
	}
	j.end, j.torn, j.live, j.prompts, j.pending, j.rewrite = 0, false, 0, 0, 0, false
	j.entries, j.byID = nil, map[string]*Entry{}
	h, fi, err := openHandle(j.path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return fmt.Errorf("open the prompt record: %w", err)
	}
	j.h, j.fi = h, fi
	if startsWithBase(h.f) {
		os.Remove(j.prevPath())
	} else if err := j.openPrev(); err != nil {
		return err
	}
	j.ingest(fi.Size())
	return nil
}

// openPrev opens and folds prev, if there is one.
func (j *Journal) openPrev() error {
	h, fi, err := openHandle(j.prevPath(), os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open the previous prompt record: %w", err)
	}
	j.prev, j.prevFi, j.prevSize = h, fi, fi.Size()
	j.fold(j.prev, 0, fi.Size()) // a torn tail there is simply dead
	return nil
}

// startsWithBase: f's first line is baseLine.
func startsWithBase(f *os.File) bool {
	b := make([]byte, len(baseLine))
	n, _ := f.ReadAt(b, 0)
	return string(b[:n]) == baseLine
}

// ingest folds the head's lines from end to size into the view.
func (j *Journal) ingest(size int64) {
	j.end, j.torn = j.fold(j.h, j.end, size)
}

// fold folds the lines of h's file from `from` to `to` into the view and
// returns where its complete lines end and whether a torn one follows.
func (j *Journal) fold(h *handle, from, to int64) (end int64, torn bool) {
	s := newScanner(h.f, from, to)
	for {
		l, st := s.next()
		switch st {
		case scanEnd:
			return to, false
		case scanTorn:
			return l.off, true
		}
		j.apply(h, &l)
	}
}

// apply folds one complete line of h's file into the view.
func (j *Journal) apply(h *handle, l *line) {
	switch l.kind {
	case promptLine:
		e := &Entry{ID: l.h.ID, Seq: l.h.Seq, Root: l.h.Root, h: h, off: l.off, n: l.n, legacy: l.legacy}
		if l.h.DeliveredTo != nil {
			e.To = *l.h.DeliveredTo
		}
		if e.ID == "" || j.byID[e.ID] != nil {
			// an old record without ids, or a copied line: give it its own
			// id, which the next compaction writes into its line
			e.ID, e.legacy = hub.RandomHex(8), true
		}
		j.rewrite = j.rewrite || e.legacy
		j.entries = append(j.entries, e)
		j.byID[e.ID] = e
		j.live += l.n + 1
		j.prompts += l.n + 1
		j.maxSeq = max(j.maxSeq, e.Seq)
		if e.To == "" {
			j.pending++
		}
	case toEvent:
		if e := j.byID[l.h.ID]; e != nil {
			j.live += l.n + 1 - e.toN
			e.toN = l.n + 1
			j.setTo(e, l.h.To)
		}
	case dropEvent:
		if e := j.byID[l.h.ID]; e != nil {
			j.remove(e)
		}
	}
}

func (j *Journal) setTo(e *Entry, to string) {
	if (e.To == "") != (to == "") {
		if to == "" {
			j.pending++
		} else {
			j.pending--
		}
	}
	e.To = to
}

// remove takes e out of the view (its lines become dead).
func (j *Journal) remove(e *Entry) {
	for i, x := range j.entries {
		if x == e {
			j.entries = append(j.entries[:i:i], j.entries[i+1:]...)
			break
		}
	}
	delete(j.byID, e.ID)
	j.live -= e.n + 1 + e.toN
	j.prompts -= e.n + 1
	if e.To == "" {
		j.pending--
	}
}

// trim drops the oldest prompts past the bounds, recording each drop.
// Caller holds the lock.
func (j *Journal) trim() {
	drop := 0
	bytes := j.prompts
	over := func() bool {
		return j.Limit > 0 && len(j.entries)-drop > j.Limit || j.MaxBytes > 0 && bytes > j.MaxBytes
	}
	for drop < len(j.entries)-1 && over() {
		bytes -= j.entries[drop].n + 1
		drop++
	}
	for _, e := range j.entries[:drop] {
		delete(j.byID, e.ID)
		j.live -= e.n + 1 + e.toN
		j.prompts -= e.n + 1
		if e.To == "" {
			j.pending--
		}
		j.out = dropLine(j.out, e.ID)
		if j.OnDrop != nil {
			j.OnDrop(e)
		}
	}
	j.entries = j.entries[drop:]
}
