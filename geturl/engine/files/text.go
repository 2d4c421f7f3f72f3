package files

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"unicode/utf8"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

// sniffBytes is how much of a file the binary check looks at (as git does).
const sniffBytes = 8000

// fingerprintHex is how many hex digits of SHA-256 a fingerprint keeps:
// 64 bits tell one version of a file from the next.
const fingerprintHex = 16

// loadFile reads the regular file open as fd (size and mtime, in Unix
// nanoseconds, from its stat) and keeps the requested lines.
func loadFile(it *item, fd sandbox.FD, size, mtime int64, t Target, lim Limits) {
	bp, err := readPrefix(fd, size, lim.MaxScanBytes)
	if err != nil {
		it.fail(it.res.Path, err)
		return
	}
	it.buf = bp
	data := *bp
	it.res.Size = max(size, int64(len(data)))
	large := int64(len(data)) > lim.MaxScanBytes
	if large {
		// Serve the prefix up to its last complete line; the rest of the
		// file is never counted or hashed.
		data = data[:lim.MaxScanBytes]
		if nl := bytes.LastIndexByte(data, '\n'); nl >= 0 {
			data = data[:nl+1]
		}
		it.res.Fingerprint = "meta-" + strconv.FormatInt(it.res.Size, 16) + "-" + strconv.FormatInt(mtime, 16)
		it.res.TotalLines = -1
	} else {
		it.res.Fingerprint = Fingerprint(data)
		it.res.TotalLines = countLines(data)
	}
	if bytes.IndexByte(data[:min(len(data), sniffBytes)], 0) >= 0 {
		it.res.Binary = true
		return
	}
	start := max(t.Start, 1)
	lines := countLines(data)
	if start > lines && !(start == 1 && lines == 0) {
		why := errPastEnd
		if large {
			why = errPastScan
		}
		total, size, fp := it.res.TotalLines, it.res.Size, it.res.Fingerprint
		it.fail(it.res.Path, why)
		it.res.TotalLines, it.res.Size, it.res.Fingerprint = total, size, fp
		return
	}
	from := lineOffset(data, start)
	if t.Skip > 0 {
		// Continue a clipped line: leave out what was shown, never past
		// the line's own bytes, and never in the middle of a character.
		line := data[from:]
		if nl := bytes.IndexByte(line, '\n'); nl >= 0 {
			line = line[:nl]
		}
		it.skip = runeStart(line, min(t.Skip, len(line)))
		from += it.skip
	}
	to := len(data)
	it.endLine = lines
	if t.End > 0 && t.End < lines {
		to = from + lineOffset(data[from:], t.End-start+2)
		it.endLine = t.End
	} else if large {
		it.more = true
	}
	window := data[from:to]
	it.demand = len(window)
	// past the cap: one more byte shows there is more, and a whole
	// character for a piece of a line that must show at least one
	if keep := lim.SingleFileCap + utf8.UTFMax; len(window) > keep {
		window = window[:keep]
	}
	it.text = window // cut copies what it keeps; Read then releases the buffer
}

// Fingerprint is the fingerprint Read reports for a file with contents b
// (at most MaxScanBytes long): truncated SHA-256 hex.
func Fingerprint(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:fingerprintHex/2])
}

// cut fits a file's window or a directory's entries into alloc bytes.
func (it *item) cut(alloc, start int) {
	r := &it.res
	if r.Error != nil || r.Binary {
		r.Complete = r.Error == nil
		return
	}
	if r.Kind == KindDir {
		it.cutDir(alloc, start)
		return
	}
	start = max(start, 1)
	w := it.text
	r.StartByte = it.skip
	if len(w) == 0 {
		r.Complete = !it.more
		r.Truncated = it.more
		return
	}
	if it.demand <= alloc {
		r.Content = string(w)
		r.StartLine, r.EndLine = start, start+countLines(w)-1
		r.Complete = !it.more
		if it.more {
			r.Truncated, r.NextStartLine = true, r.EndLine+1
		}
	} else {
		r.Truncated = true
		w = w[:min(alloc, len(w))]
		if nl := bytes.LastIndexByte(w, '\n'); nl >= 0 {
			r.Content = string(w[:nl+1])
			r.StartLine, r.EndLine = start, start+countLines(w[:nl+1])-1
			r.NextStartLine = r.EndLine + 1
		} else if len(w) > 0 {
			// Not even the first line fits: show a piece of it; the next
			// page continues the line where this piece ends.
			n := utf8Boundary(w)
			if n == 0 { // an allowance smaller than one character: show it anyway
				_, n = utf8.DecodeRune(it.text)
			}
			r.Content = string(it.text[:n])
			r.StartLine, r.EndLine = start, start
			if n < it.demand {
				r.ClippedLine = true
				r.NextStartLine, r.NextSkip = start, it.skip+n
			} else { // that character was all that was left
				r.Truncated, r.Complete = it.more, !it.more
			}
		} else {
			r.NextStartLine = start
		}
	}
	r.InvalidUTF8 = !utf8.ValidString(r.Content)
}

// countLines counts lines the way editors number them: a final line without
// a newline counts, an empty file has none.
func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// lineOffset returns the byte offset where 1-based line n starts (len(b)
// when b has fewer lines).
func lineOffset(b []byte, n int) int {
	off := 0
	for ; n > 1; n-- {
		i := bytes.IndexByte(b[off:], '\n')
		if i < 0 {
			return len(b)
		}
		off += i + 1
	}
	return off
}

// runeStart is skip moved back to the start of the character it falls
// inside, if it falls inside a valid multi-byte one; a piece ends at such
// a start or between invalid bytes, so a next URL's skip stays as it is.
func runeStart(line []byte, skip int) int {
	for i := skip - 1; i >= 0 && i > skip-utf8.UTFMax; i-- {
		if utf8.RuneStart(line[i]) {
			if _, n := utf8.DecodeRune(line[i:]); n > 1 && i+n > skip {
				return i
			}
			return skip
		}
	}
	return skip
}

// utf8Boundary returns the largest prefix length of b that does not end
// inside a UTF-8 sequence.
func utf8Boundary(b []byte) int {
	n := len(b)
	for i := n - 1; i >= 0 && i >= n-3; i-- {
		c := b[i]
		if c&0xC0 == 0x80 {
			continue
		}
		if c >= 0xC0 {
			need := 2
			if c >= 0xE0 {
				need = 3
			}
			if c >= 0xF0 {
				need = 4
			}
			if n-i < need {
				return i
			}
		}
		break
	}
	return n
}
