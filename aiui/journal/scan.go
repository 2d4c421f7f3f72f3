package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/hubdev/hub/aiui/jsonstr"
)

// kind is what a line of the record is.
type kind uint8

const (
	deadLine   kind = iota // torn, foreign, or invalid: skipped
	promptLine             // a delivered prompt
	toEvent                // who took a prompt
	dropEvent              // a prompt fell out of the bounds
)

// head is everything of a line but a prompt's text: what the index keeps.
// Every field a Record has is decoded (meta and at included) so a line a
// face could not decode is never indexed as a prompt.
type head struct {
	Ev          string            `json:"ev"`
	ID          string            `json:"id"`
	Seq         int64             `json:"seq"`
	At          time.Time         `json:"at"`
	Meta        map[string]string `json:"meta"`
	Root        string            `json:"root"`
	To          string            `json:"to"`
	DeliveredTo *string           `json:"deliveredTo"`
	Text        textField         `json:"text"`
}

// textField checks that a line's text is a string without decoding it.
type textField struct{ seen bool }

func (t *textField) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '"' && string(b) != "null" {
		return errors.New("text is not a string")
	}
	t.seen = true
	return nil
}

// line is one line of the record as the index sees it.
type line struct {
	off  int64 // where it starts in the file
	n    int64 // its length without the '\n'
	kind kind
	h    head
	// legacy: a prompt line this package would not write as it is (text
	// not first, a deliveredTo of its own, or no '}' last), re-encoded by
	// the next compaction.
	legacy bool
}

// classify decides what a decoded line is.
func (l *line) classify() {
	switch {
	case l.h.Ev == "" && l.h.Seq > 0:
		l.kind = promptLine
		l.legacy = l.legacy || l.h.DeliveredTo != nil
	case l.h.Ev == "to" && l.h.ID != "" && l.h.Seq == 0:
		l.kind = toEvent
	case l.h.Ev == "drop" && l.h.ID != "" && l.h.Seq == 0:
		l.kind = dropEvent
	default:
		l.kind = deadLine
	}
}

// maxLine bounds a line held whole in memory (event lines, and prompt
// lines in a layout older than this package's); a longer one is skipped.
const maxLine = 256 << 20

// scanner reads the record's lines from a range of the file with bounded
// memory: a prompt line's text is validated in pieces as it streams by.
type scanner struct {
	r       *bufio.Reader
	pos     int64 // file offset of the next unread byte
	scratch []byte
}

func newScanner(r io.ReaderAt, from, to int64) *scanner {
	return &scanner{r: bufio.NewReaderSize(io.NewSectionReader(r, from, to-from), 64<<10), pos: from}
}

// scanStatus is how next ended.
type scanStatus uint8

const (
	scanLine scanStatus = iota // a complete line (possibly dead)
	scanEnd                    // no bytes left
	scanTorn                   // the range ends inside an unterminated line (starting at line.off)
)

func (s *scanner) discard(n int) {
	s.r.Discard(n)
	s.pos += int64(n)
}

// next reads one line.
func (s *scanner) next() (line, scanStatus) {
	l := line{off: s.pos}
	b, err := s.r.Peek(len(textOpen))
	if len(b) == 0 && err != nil {
		return l, scanEnd
	}
	var st scanStatus
	if bytes.Equal(b, []byte(textOpen)) {
		st = s.promptLine(&l)
	} else {
		st = s.wholeLine(&l)
	}
	if st == scanLine {
		l.n = s.pos - 1 - l.off
	}
	return l, st
}

// promptLine reads a line laid out as this package writes prompts: the
// text's contents are validated in pieces, then the small rest decoded.
func (s *scanner) promptLine(l *line) scanStatus {
	s.discard(len(textOpen))
	for {
		b, err := s.r.Peek(s.r.Size())
		end, _, st := jsonstr.Span(b, false)
		s.discard(end)
		switch st {
		case jsonstr.Bad:
			return s.skip(l)
		case jsonstr.Closed:
			return s.promptRest(l)
		}
		if err != nil { // More with nothing left to read: cut short
			return scanTorn
		}
	}
}

// promptRest decodes what follows the text's closing quote.
func (s *scanner) promptRest(l *line) scanStatus {
	rest, err := s.r.ReadSlice('\n')
	s.pos += int64(len(rest))
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return s.skip(l) // a prompt's fields besides its text are small
	case err != nil:
		return scanTorn
	}
	// rest is `",…}\n`: decode `{…}`
	if len(rest) < 3 || rest[1] != ',' {
		if len(rest) == 3 && string(rest) == "\"}\n" {
			s.scratch = append(s.scratch[:0], "{}"...)
		} else {
			return scanLine // dead
		}
	} else {
		s.scratch = append(append(s.scratch[:0], '{'), rest[2:len(rest)-1]...)
	}
	if json.Unmarshal(s.scratch, &l.h) != nil || l.h.Text.seen || l.h.Ev != "" {
		return scanLine // dead: invalid, or a second text field
	}
	l.h.Text.seen = true
	l.legacy = rest[len(rest)-2] != '}'
	l.classify()
	return scanLine
}

// wholeLine reads a line into memory and decodes it.
func (s *scanner) wholeLine(l *line) scanStatus {
	s.scratch = s.scratch[:0]
	for {
		b, err := s.r.ReadSlice('\n')
		s.pos += int64(len(b))
		if len(s.scratch)+len(b) <= maxLine {
			s.scratch = append(s.scratch, b...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return scanTorn
		}
		break
	}
	data := s.scratch[:len(s.scratch)-1]
	if s.pos-l.off > maxLine || len(data) == 0 || json.Unmarshal(data, &l.h) != nil {
		return scanLine // dead
	}
	// only a prompt line of this package's layout may be spliced as is
	l.legacy = !bytes.HasPrefix(data, []byte(textOpen)) || data[len(data)-1] != '}'
	l.classify()
	return scanLine
}

// skip consumes the rest of a dead line.
func (s *scanner) skip(l *line) scanStatus {
	for {
		b, err := s.r.ReadSlice('\n')
		s.pos += int64(len(b))
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return scanTorn
		}
		l.kind = deadLine
		return scanLine
	}
}
