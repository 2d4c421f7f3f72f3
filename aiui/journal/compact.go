package journal

import (
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/hubdev/hub/aiui/jsonstr"
	"github.com/hubdev/hub/hub"
)

// compactNow rewrites the record with only its live lines: prompt lines
// (copied in the kernel where the layout is current, re-encoded where it
// is not), then one "to" line per taken prompt. The new file is fsynced
// and renamed over the record, so a crash leaves the old record or the
// new one, never a mix. With a prev it takes prev's live lines too and
// starts with a base line, so a crash before prev is deleted leaves a
// head that says prev is stale. Caller holds the lock.
func (j *Journal) compactNow() (err error) {
	j.compactions++
	tmpPath := j.path + ".tmp-" + hub.RandomHex(4)
	tmp, err := os.OpenFile(tmpPath, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmpPath)
		}
	}()
	type placed struct{ off, n int64 }
	at := make([]placed, len(j.entries))
	var pos int64
	if j.prev != nil {
		if _, err := tmp.WriteString(baseLine); err != nil {
			return err
		}
		pos = int64(len(baseLine))
	}
	base := pos
	for i := 0; i < len(j.entries); {
		e := j.entries[i]
		if e.legacy {
			line, err := j.reencode(e)
			if err != nil {
				return err
			}
			if _, err := tmp.Write(line); err != nil {
				return err
			}
			at[i] = placed{pos, int64(len(line)) - 1}
			pos += int64(len(line))
			i++
			continue
		}
		// a run of adjacent current-layout prompt lines is one copy
		k, runEnd := i, e.off
		for k < len(j.entries) && !j.entries[k].legacy && j.entries[k].h == e.h && j.entries[k].off == runEnd {
			at[k] = placed{pos + runEnd - e.off, j.entries[k].n}
			runEnd += j.entries[k].n + 1
			k++
		}
		if _, err := io.Copy(tmp, io.NewSectionReader(e.h.f, e.off, runEnd-e.off)); err != nil {
			return err
		}
		pos += runEnd - e.off
		i = k
	}
	var marks []byte
	toN := make([]int64, len(j.entries))
	for i, e := range j.entries {
		if e.To != "" {
			m := len(marks)
			marks = toLine(marks, e.ID, e.To)
			toN[i] = int64(len(marks) - m)
		}
	}
	if _, err := tmp.Write(marks); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmpPath, j.path); err != nil {
		return err
	}
	syncDir(j.path)
	if j.prev != nil {
		os.Remove(j.prevPath()) // or the next reload does, seeing the base line
		j.prev.removed.Store(true)
		j.dropPrev()
	}
	h, fi, err := openHandle(j.path, os.O_RDWR)
	j.h.removed.Store(true) // the rename replaced its file
	j.h.release()
	if err != nil {
		j.h = nil // the view no longer matches any file: rebuild it at the next sync
		return err
	}
	j.h, j.fi = h, fi
	for i, e := range j.entries {
		e.h, e.off, e.n, e.toN, e.legacy = j.h, at[i].off, at[i].n, toN[i], false
	}
	j.end = pos + int64(len(marks))
	j.live, j.torn, j.rewrite = j.end-base, false, false
	return nil
}

// rotate makes the head prev (a rename: nothing is copied) and starts an
// empty head. Caller holds the lock, and there is no prev.
func (j *Journal) rotate() error {
	if err := os.Rename(j.path, j.prevPath()); err != nil {
		return err
	}
	j.prev, j.prevFi, j.prevSize = j.h, j.fi, j.end
	j.h, j.fi, j.end, j.torn = nil, nil, 0, false
	h, fi, err := openHandle(j.path, os.O_RDWR|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return errors.Join(err, j.reload())
	}
	j.h, j.fi = h, fi
	syncDir(j.path)
	return nil
}

// syncDir makes a rename or creation in path's directory durable.
func syncDir(path string) {
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
}

// reencode writes a legacy prompt line in this package's layout (text
// first, no deliveredTo of its own, its current id).
func (j *Journal) reencode(e *Entry) ([]byte, error) {
	v := j.View(e)
	defer v.Close()
	r, err := v.Record()
	if err != nil {
		return nil, err
	}
	line := jsonstr.Append([]byte(textOpen), r.Text)
	return promptTail(line, e.ID, r.Seq, r.At, r.Meta, r.Root), nil
}
