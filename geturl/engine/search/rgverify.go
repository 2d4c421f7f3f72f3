package search

import (
	"bufio"
	"bytes"
	"io"
	"os"
)

// rgFile is a file rg reports matches in, opened again by us through
// sandbox.Open: what the agent gets is what this descriptor holds. rg
// walks the tree by path names, so a directory renamed for a link to
// outside while it walks would have it read (and report) a file outside the
// project; its matches are kept only where this file, opened beneath the
// project without following any link, holds the same line at the same
// number. Matches come in line order, so the file is read once, no further
// than the last match.
type rgFile struct {
	f    *os.File
	r    *bufio.Reader
	line int // lines consumed so far
}

// openRGFile opens host; ok is false when it cannot be opened safely or is
// binary (the rule the Go engine applies), and then nothing is reported.
func openRGFile(host string) (*rgFile, bool) {
	f, err := openFile(host)
	if err != nil {
		return nil, false
	}
	r := bufio.NewReaderSize(f, sniffBytes)
	head, _ := r.Peek(sniffBytes)
	if isBinary(head) {
		f.Close()
		return nil, false
	}
	return &rgFile{f: f, r: r}, true
}

func (v *rgFile) close() {
	if v != nil {
		v.f.Close()
	}
}

// holds reports whether line number n (1-based, after any earlier one
// asked) is exactly text, its line ending included.
func (v *rgFile) holds(n int, text []byte) bool {
	for v.line < n-1 {
		if !v.skipLine() {
			return false
		}
	}
	if v.line != n-1 {
		return false
	}
	v.line++
	rest := text
	for {
		chunk, err := v.r.ReadSlice('\n')
		if !bytes.HasPrefix(rest, chunk) {
			if err == bufio.ErrBufferFull {
				v.skipLine()
				v.line-- // skipLine counted the line this one started
			}
			return false
		}
		rest = rest[len(chunk):]
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil, io.EOF:
			return len(rest) == 0
		}
		return false
	}
}

// skipLine consumes one line; false at the end of the file or on an error.
func (v *rgFile) skipLine() bool {
	for {
		chunk, err := v.r.ReadSlice('\n')
		switch err {
		case nil:
			v.line++
			return true
		case bufio.ErrBufferFull:
			continue
		}
		if len(chunk) > 0 {
			v.line++ // a last line without a newline
		}
		return false
	}
}
