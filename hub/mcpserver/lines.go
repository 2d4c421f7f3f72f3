package mcpserver

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// errLineTooLong marks an incoming line over the limit; the rest of that
// line is skipped, so the stream stays in step.
var errLineTooLong = errors.New("mcpserver: line longer than the limit")

// lineReader splits a byte stream into '\n'-terminated lines. A line's
// length (without its terminator) is bounded by max so a peer cannot make
// us buffer without end; blank lines are skipped, and a last line without
// a terminator still counts.
type lineReader struct {
	r   *bufio.Reader
	max int
}

func newLineReader(r io.Reader, max, bufSize int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, bufSize), max: max}
}

// next returns the next non-blank line with surrounding space trimmed,
// errLineTooLong for a line over the limit, or the reader's error (io.EOF
// at the end).
func (l *lineReader) next() ([]byte, error) {
	for {
		var line []byte
		tooLong := false
		for {
			chunk, err := l.r.ReadSlice('\n')
			body := bytes.TrimSuffix(chunk, []byte{'\n'})
			if !tooLong {
				if len(line)+len(body) > l.max {
					tooLong, line = true, nil
				} else {
					line = append(line, body...)
				}
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil {
				if err != io.EOF {
					return nil, err
				}
				// The last line may end without '\n'; the next call then
				// finds nothing and reports io.EOF.
				if tooLong {
					return nil, errLineTooLong
				}
				if t := bytes.TrimSpace(line); len(t) > 0 {
					return t, nil
				}
				return nil, io.EOF
			}
			break
		}
		if tooLong {
			return nil, errLineTooLong
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			return t, nil
		}
	}
}
