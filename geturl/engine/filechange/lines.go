package filechange

import "strings"

// line is one line of a file: its text and its terminator ("\n", "\r\n",
// or "" for a last line without one). Joining the lines of a file gives its
// bytes back exactly.
type line struct {
	text string
	eol  string
}

// splitLines cuts s into lines. Only "\n" ends a line; a "\r" right before
// it belongs to the terminator, any other "\r" (and U+2028, NEL, ...) is
// text.
func splitLines(s string) []line {
	out := make([]line, 0, strings.Count(s, "\n")+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, line{text: s})
			break
		}
		l := line{text: s[:i], eol: "\n"}
		if i > 0 && s[i-1] == '\r' {
			l = line{text: s[:i-1], eol: "\r\n"}
		}
		out = append(out, l)
		s = s[i+1:]
	}
	return out
}

func joinLines(ls []line) string {
	n := 0
	for _, l := range ls {
		n += len(l.text) + len(l.eol)
	}
	var b strings.Builder
	b.Grow(n)
	for _, l := range ls {
		b.WriteString(l.text)
		b.WriteString(l.eol)
	}
	return b.String()
}

// dominantEOL is the terminator new lines get in a file: CRLF when more of
// its lines end in CRLF than in a bare LF, otherwise LF (also for a file
// with no terminated line at all).
func dominantEOL(ls []line) string {
	crlf, lf := 0, 0
	for _, l := range ls {
		switch l.eol {
		case "\r\n":
			crlf++
		case "\n":
			lf++
		}
	}
	if crlf > lf {
		return "\r\n"
	}
	return "\n"
}

// allCRLF reports whether s has line breaks and every one of them is CRLF.
func allCRLF(s string) bool {
	n := strings.Count(s, "\n")
	return n > 0 && strings.Count(s, "\r\n") == n
}

// toCRLF turns every bare LF of s into CRLF, leaving existing CRLFs alone.
func toCRLF(s string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + strings.Count(s, "\n"))
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && (i == 0 || s[i-1] != '\r') {
			b.WriteByte('\r')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// lineOf is the 1-based line number of byte offset off in s.
func lineOf(s string, off int) int { return strings.Count(s[:off], "\n") + 1 }
