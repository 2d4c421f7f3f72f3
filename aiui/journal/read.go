package journal

import (
	"errors"
	"io/fs"
	"os"
)

// Read returns the live prompts of the record at path, oldest first (a
// missing record has none). It takes no lock and writes nothing: a line
// being appended meanwhile is unterminated and not read, and a rotation
// or compaction meanwhile (the head replaced under it) makes it read
// again.
func Read(path string) ([]Record, error) {
	for attempt := 0; ; attempt++ {
		recs, stable, err := read(path)
		if err != nil || stable || attempt == 2 {
			return recs, err
		}
	}
}

// read is one lock-free read; stable reports that the head it opened (or
// found missing) was still the head once it had opened prev.
func read(path string) (recs []Record, stable bool, err error) {
	j := &Journal{path: path, byID: map[string]*Entry{}}
	defer j.dropPrev()
	h, fi, err := openHandle(path, os.O_RDONLY)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, true, err
	}
	if h != nil { // else a crash between a rotation's rename and its new head
		j.h = h
		defer h.release()
	}
	if h == nil || !startsWithBase(h.f) {
		if err := j.openPrev(); err != nil {
			return nil, true, err
		}
	}
	// a rotation or compaction since the head was opened replaced it
	if now, err := os.Stat(path); (err == nil) != (fi != nil) || fi != nil && !os.SameFile(now, fi) {
		return nil, false, nil
	}
	if fi != nil {
		j.ingest(fi.Size())
	}
	recs = make([]Record, 0, len(j.entries))
	for _, e := range j.entries {
		v := e.view()
		r, err := v.Record()
		v.Close()
		if err != nil {
			continue // the file changed under a lock-free read
		}
		r.DeliveredTo = e.To
		recs = append(recs, r)
	}
	return recs, true, nil
}

// Take is the shell's read of the record while no backend runs: it marks
// every pending prompt as read by the shell (so the next backend does not
// hand it to a face a second time) and calls each with every live prompt,
// oldest first. A missing record is left missing.
func Take(path string, each func(Record) error) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	j, err := Open(path, 0, 0)
	if err != nil {
		return err
	}
	defer j.Close()
	if err := j.Begin(); err != nil {
		return err
	}
	views := make([]*View, 0, len(j.entries))
	tos := make([]string, 0, len(j.entries))
	for _, e := range j.entries {
		if e.To == "" {
			j.SetTo(e, "shell")
		}
		views = append(views, j.View(e))
		tos = append(tos, e.To)
	}
	werr := j.End()
	defer func() {
		for _, v := range views {
			v.Close()
		}
	}()
	for i, v := range views {
		r, err := v.Record()
		if err != nil {
			continue
		}
		r.DeliveredTo = tos[i]
		if err := each(r); err != nil {
			return err
		}
	}
	return werr
}
