package journal

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hubdev/hub/aiui/jsonstr"
	"github.com/hubdev/hub/hub"
)

// flush appends the queued event lines.
func (j *Journal) flush() error {
	if len(j.out) == 0 {
		return nil
	}
	defer func() { j.out = j.out[:0] }()
	return j.write(j.out)
}

// tornEnd ends a torn line. A bare newline would not do: a line cut just
// before its newline is a whole prompt, never acknowledged, whose seq was
// given out again, and a newline would bring it back for every reader.
// No prefix of a JSON line followed by '#' is valid JSON, so the line
// stays dead.
const tornEnd = "#torn\n"

// terminate ends a torn line left by a crashed writer, so it stays one
// dead line and the next line starts clean. Caller holds the lock.
func (j *Journal) terminate() error {
	if !j.torn {
		return nil
	}
	fi, err := j.h.f.Stat()
	if err != nil {
		return err
	}
	if _, err := j.h.f.WriteAt([]byte(tornEnd), fi.Size()); err != nil {
		return j.writeFailed(err)
	}
	j.end, j.torn = fi.Size()+int64(len(tornEnd)), false
	return nil
}

// write appends pieces that together are whole lines at end. Caller holds
// the lock and accounts what of them is live.
func (j *Journal) write(pieces ...[]byte) error {
	if err := j.seekEnd(); err != nil {
		return err
	}
	for _, p := range pieces {
		n, err := j.h.f.Write(p)
		j.end += int64(n)
		if err != nil {
			return j.writeFailed(err)
		}
	}
	return nil
}

// seekEnd terminates a torn line and puts the file's offset at end, where
// the next write goes. The record is not opened O_APPEND: under the lock
// end is the file's size, and without O_APPEND a spilled text is copied
// into it in the kernel (copy_file_range refuses an appending file).
func (j *Journal) seekEnd() error {
	if err := j.terminate(); err != nil {
		return err
	}
	if _, err := j.h.f.Seek(j.end, io.SeekStart); err != nil {
		return j.writeFailed(err)
	}
	return nil
}

// writeFailed leaves whatever part of a line reached the file to the next
// sync, which finds it unterminated and terminates it before appending.
func (j *Journal) writeFailed(err error) error {
	if fi, serr := j.h.f.Stat(); serr == nil && fi.Size() > j.end {
		j.ingest(fi.Size())
	}
	return fmt.Errorf("write the prompt record: %w", err)
}

// Prompt is a prompt to append.
type Prompt struct {
	Meta map[string]string
	Root string
	// Body is the text as JSON string contents.
	Body *jsonstr.Buffer
	// To is who takes it at once ("" = pending).
	To string
}

// Append records a delivered prompt: one line (two when it was taken at
// once), written in O(prompt). Caller holds the lock (Begin).
func (j *Journal) Append(p Prompt) (*Entry, error) {
	if !j.locked {
		return nil, errors.New("journal: Append outside Begin/End")
	}
	if err := j.flush(); err != nil { // keep event lines in order
		return nil, err
	}
	now := time.Now
	if j.Now != nil {
		now = j.Now
	}
	e := &Entry{ID: hub.RandomHex(8), Seq: j.maxSeq + 1, Root: p.Root, To: p.To, h: j.h}
	tail := promptTail(make([]byte, 0, 256), e.ID, e.Seq, now().UTC(), p.Meta, p.Root)
	e.n = int64(len(textOpen)+p.Body.Len()+len(tail)) - 1
	if p.To != "" {
		mark := len(tail)
		tail = toLine(tail, e.ID, p.To)
		e.toN = int64(len(tail) - mark)
	}
	if err := j.appendLine(p.Body, tail); err != nil {
		return nil, err
	}
	e.off = j.end - (e.n + 1 + e.toN)
	j.entries = append(j.entries, e)
	j.byID[e.ID] = e
	j.live += e.n + 1 + e.toN
	j.prompts += e.n + 1
	j.maxSeq = e.Seq
	if e.To == "" {
		j.pending++
	}
	return e, nil
}

// appendLine writes a prompt line (its text, then tail) at end: held in
// memory, in one vectored write at that offset (one system call however
// many chunks the text is in, where the OS has it); spilled, copied from
// the spill file after a seek. Caller holds the lock.
func (j *Journal) appendLine(body *jsonstr.Buffer, tail []byte) error {
	if err := j.terminate(); err != nil {
		return err
	}
	bufs, ok := body.AppendChunks(append(j.iov[:0], []byte(textOpen)))
	if !ok {
		if err := j.write([]byte(textOpen)); err != nil {
			return err
		}
		n, err := body.WriteTo(j.h.f)
		j.end += n
		if err != nil {
			return j.writeFailed(err)
		}
		return j.write(tail)
	}
	bufs = append(bufs, tail)
	n, err := writeVecAt(j.h.f, bufs, j.end)
	clear(bufs)
	j.iov = bufs[:0]
	j.end += n
	if err != nil {
		return j.writeFailed(err)
	}
	return nil
}

// SetTo records who took e ("" = pending again). Caller holds the lock;
// the line is written at End.
func (j *Journal) SetTo(e *Entry, to string) {
	if j.byID[e.ID] != e || e.To == to {
		return
	}
	mark := len(j.out)
	j.out = toLine(j.out, e.ID, to)
	n := int64(len(j.out) - mark)
	j.live += n - e.toN
	e.toN = n
	j.setTo(e, to)
}
