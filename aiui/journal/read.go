package journal

import (
	"errors"
	"io/fs"
	"os"
)

// Read returns the live prompts of the record at path, oldest first (a
// missing record has none). It takes no lock and writes nothing: a line
// being appended meanwhile is unterminated and not read.
func Read(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	j := &Journal{path: path, h: newHandle(f), byID: map[string]*Entry{}}
	defer j.h.release()
	j.ingest(fi.Size())
	out := make([]Record, 0, len(j.entries))
	for _, e := range j.entries {
		v := j.View(e)
		r, err := v.Record()
		v.Close()
		if err != nil {
			continue // the file changed under a lock-free read
		}
		r.DeliveredTo = e.To
		out = append(out, r)
	}
	return out, nil
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
