package journal

import (
	"fmt"
	"os"

	"github.com/hubdev/hub/hub"
)

// sync brings the view up to date with the file on disk. Caller holds the
// lock.
func (j *Journal) sync() error {
	fi, err := os.Stat(j.path)
	if err != nil || j.h == nil || !os.SameFile(fi, j.fi) || fi.Size() < j.end {
		return j.reload()
	}
	if fi.Size() > j.end {
		j.ingest(fi.Size())
	}
	return nil
}

// reload reopens the file and rebuilds the view from its first byte.
func (j *Journal) reload() error {
	f, err := os.OpenFile(j.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open the prompt record: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	if j.h != nil {
		j.h.release()
	}
	j.h, j.fi = newHandle(f), fi
	j.end, j.torn, j.live, j.prompts, j.pending, j.rewrite = 0, false, 0, 0, 0, false
	j.entries, j.byID = nil, map[string]*Entry{}
	j.ingest(fi.Size())
	return nil
}

// ingest folds the file's lines from end to size into the view.
func (j *Journal) ingest(size int64) {
	s := newScanner(j.h.f, j.end, size)
	for {
		l, st := s.next()
		switch st {
		case scanEnd:
			j.end, j.torn = size, false
			return
		case scanTorn:
			j.end, j.torn = l.off, true
			return
		}
		j.apply(&l)
	}
}

// apply folds one complete line into the view.
func (j *Journal) apply(l *line) {
	switch l.kind {
	case promptLine:
		e := &Entry{ID: l.h.ID, Seq: l.h.Seq, Root: l.h.Root, off: l.off, n: l.n, legacy: l.legacy}
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
