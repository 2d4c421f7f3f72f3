package replay

import (
	"bytes"
	"encoding/json"
	"errors"
)

const (
	// PartSize bounds one part: small enough that the metadata line plus the
	// part fit a client that shows only about 3 KiB of a raw fetch.
	PartSize = 2304
	// MaxRangeLength bounds the length of one offset/length read. The spec
	// sets none; 32 KiB is above any response the read tools produce.
	MaxRangeLength = 32 << 10
	// Header starts every range answer.
	Header = "GETMCP_RANGE "
)

// Meta is the JSON on a range answer's first line.
type Meta struct {
	ID string `json:"id"`
	// Part and Parts are set in part mode only.
	Part  *int `json:"part,omitempty"`
	Parts int  `json:"parts,omitempty"`
	// Offset and Length are the chunk's byte coordinates after UTF-8
	// boundary correction (in part mode too).
	Offset  int  `json:"offset"`
	Length  int  `json:"length"`
	Total   int  `json:"total"`
	HasMore bool `json:"hasMore"`
	// Next is the exact URL of the following chunk, filled in by the caller
	// (this package builds no URLs) and omitted when HasMore is false.
	Next string `json:"next,omitempty"`
}

// Range is one chunk of a stored response.
type Range struct {
	Meta
	Chunk []byte
	// NextPart (part mode) and NextOffset (both modes) say where the
	// following chunk starts, for the caller to build Meta.Next.
	NextPart   int
	NextOffset int
}

// Part returns part n (0-based) of response id, read at level at (see
// Level). The chunk is a copy.
func (s *Store) Part(id string, n int, at Level) (Range, error) {
	var r Range
	err := s.read(id, at, func(body []byte) {
		// Cut here rather than at Put: most stored answers are never read back.
		start, end, parts := partBounds(body, n)
		if n < 0 || n >= parts {
			return
		}
		part := n
		r = Range{
			Meta: Meta{ID: id, Part: &part, Parts: parts, Offset: start, Length: end - start,
				Total: len(body), HasMore: n+1 < parts},
			Chunk: append([]byte(nil), body[start:end]...), NextPart: n + 1, NextOffset: end,
		}
	})
	if err == nil && r.Part == nil {
		err = ErrPartRange
	}
	return r, err
}

// Range returns up to length bytes of response id from offset. A start
// inside a multi-byte UTF-8 sequence moves back to its first byte; an end
// inside one moves back too, unless that would leave nothing, in which case
// it moves forward so the one straddling character is returned whole. The
// chunk is a copy. It is read at level at (see Level).
func (s *Store) Range(id string, offset, length int, at Level) (Range, error) {
	var (
		r   Range
		bad bool
	)
	err := s.read(id, at, func(body []byte) {
		total := len(body)
		if length < 1 || length > MaxRangeLength || offset < 0 || offset > total || (offset == total && total > 0) {
			bad = true
			return
		}
		start, end := span(body, offset, length)
		r = Range{
			Meta:  Meta{ID: id, Offset: start, Length: end - start, Total: total, HasMore: end < total},
			Chunk: append([]byte(nil), body[start:end]...), NextPart: -1, NextOffset: end,
		}
	})
	if err == nil && bad {
		err = ErrBadRange
	}
	return r, err
}

// span computes the boundary-corrected [start, end) of an offset read.
func span(b []byte, offset, length int) (start, end int) {
	start = runeStart(b, offset)
	end = min(start+length, len(b))
	if e := runeStart(b, end); e > start {
		end = e
	} else {
		end = runeEnd(b, start)
	}
	return start, end
}

// partBounds cuts b into parts of at most PartSize bytes, never splitting a
// UTF-8 sequence, and returns part n's [start, end) (zeros when there is no
// part n) and the number of parts. An empty body has one empty part.
func partBounds(b []byte, n int) (start, end, parts int) {
	for s := 0; ; parts++ {
		e := len(b)
		if len(b)-s > PartSize {
			if e = runeStart(b, s+PartSize); e <= s {
				e = s + PartSize
			}
		}
		if parts == n {
			start, end = s, e
		}
		if e == len(b) {
			return start, end, parts + 1
		}
		s = e
	}
}

func isCont(c byte) bool { return c&0xC0 == 0x80 }

// seqLen is the length a UTF-8 sequence starting with lead byte c claims
// (1 for ASCII and for bytes that cannot start a sequence).
func seqLen(c byte) int {
	switch {
	case c&0xE0 == 0xC0:
		return 2
	case c&0xF0 == 0xE0:
		return 3
	case c&0xF8 == 0xF0:
		return 4
	}
	return 1
}

// runeStart returns the start of the UTF-8 sequence containing b[i]: the
// nearest lead byte at most three bytes back whose sequence reaches i through
// continuation bytes only. Anything else (ASCII, invalid bytes) is a boundary
// already, so every result is a fixed point and chunk boundaries never move
// backwards, even in invalid input.
func runeStart(b []byte, i int) int {
	if i <= 0 || i >= len(b) || !isCont(b[i]) {
		return i
	}
	for j := i - 1; j >= 0 && j >= i-3; j-- {
		if !isCont(b[j]) {
			if j+seqLen(b[j]) > i {
				return j
			}
			return i
		}
	}
	return i
}

// runeEnd returns the end of the sequence starting at i (at least i+1).
func runeEnd(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	n := seqLen(b[i])
	end := i + 1
	for end < len(b) && end < i+n && isCont(b[end]) {
		end++
	}
	return end
}

// Render returns the plain-text range answer: the header line carrying the
// metadata (with next as its Next URL when there is more), then the chunk.
func (r Range) Render(next string) []byte {
	m := r.Meta
	m.Next = ""
	if m.HasMore {
		m.Next = next
	}
	var buf bytes.Buffer
	buf.Grow(len(Header) + 160 + len(next) + len(r.Chunk))
	buf.WriteString(Header)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep "&" in the next URL readable
	enc.Encode(m)            // writes the newline that ends the header
	buf.Write(r.Chunk)
	return buf.Bytes()
}

// ErrMalformed is returned by Parse for text that is not a range answer.
var ErrMalformed = errors.New("not a range answer")

// Parse splits a rendered range answer into its metadata and chunk.
func Parse(b []byte) (Meta, []byte, error) {
	if !bytes.HasPrefix(b, []byte(Header)) {
		return Meta{}, nil, ErrMalformed
	}
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return Meta{}, nil, ErrMalformed
	}
	var m Meta
	if err := json.Unmarshal(b[len(Header):nl], &m); err != nil {
		return Meta{}, nil, ErrMalformed
	}
	chunk := b[nl+1:]
	if m.Length != len(chunk) || m.Offset < 0 || m.Offset+m.Length > m.Total {
		return Meta{}, nil, ErrMalformed
	}
	return m, chunk, nil
}
