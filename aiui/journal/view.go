package journal

import (
	"encoding/json"
	"io"
	"sync"

	"github.com/hubdev/hub/aiui/jsonstr"
)

// View is one prompt's line, readable after the journal's lock is
// released: it keeps the file it was opened on even if a compaction
// replaces the record meanwhile.
type View struct {
	id     string
	legacy bool
	line   *io.SectionReader
	h      *handle
	once   sync.Once
}

// Close releases the view's file.
func (v *View) Close() { v.once.Do(v.h.release) }

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// WriteRecord writes the prompt as one JSON object (no newline), with
// deliveredTo set to to ("" leaves it out). A line in this package's
// layout is streamed as it is, with deliveredTo spliced in before its
// closing brace: no decoding, and memory bounded however long the text.
func (v *View) WriteRecord(w io.Writer, to string) error {
	if v.legacy {
		r, err := v.Record()
		if err != nil {
			return err
		}
		r.DeliveredTo = to
		b, err := marshal(r)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	buf := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(buf)
	if _, err := io.CopyBuffer(w, io.NewSectionReader(v.line, 0, v.line.Size()-1), *buf); err != nil {
		return err
	}
	tail := (*buf)[:0]
	if to != "" {
		tail = jsonstr.Quote(append(tail, `,"deliveredTo":`...), to)
	}
	_, err := w.Write(append(tail, '}'))
	return err
}

// Record decodes the prompt (text included).
func (v *View) Record() (Record, error) {
	b := make([]byte, v.line.Size())
	if _, err := v.line.ReadAt(b, 0); err != nil {
		return Record{}, err
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, err
	}
	r.ID = v.id // an id given on load is the one marks use
	if !v.legacy {
		r.DeliveredTo = ""
	}
	return r, nil
}

// marshal encodes a record without HTML escaping or a newline.
func marshal(r Record) ([]byte, error) {
	var buf = make([]byte, 0, len(r.Text)+256)
	w := &appendWriter{buf}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return w.b[:len(w.b)-1], nil
}

type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
