package journal

import (
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
// new one, never a mix. Caller holds the lock.
func (j *Journal) compactNow() (err error) {
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
		for k < len(j.entries) && !j.entries[k].legacy && j.entries[k].off == runEnd {
			at[k] = placed{pos + runEnd - e.off, j.entries[k].n}
			runEnd += j.entries[k].n + 1
			k++
		}
		if _, err := j.h.f.Seek(e.off, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.Copy(tmp, io.LimitReader(j.h.f, runEnd-e.off)); err != nil {
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
	if d, derr := os.Open(filepath.Dir(j.path)); derr == nil {
		d.Sync()
		d.Close()
	}
	f, err := os.OpenFile(j.path, os.O_RDWR, 0o600)
	if err != nil {
		j.h.release() // the view no longer matches any file: rebuild it at the next sync
		j.h = nil
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	j.h.release()
	j.h, j.fi = newHandle(f), fi
	for i, e := range j.entries {
		e.off, e.n, e.toN, e.legacy = at[i].off, at[i].n, toN[i], false
	}
	j.end = pos + int64(len(marks))
	j.live, j.torn, j.rewrite = j.end, false, false
	return nil
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
