package search

import "unicode/utf8"

// Match is one matching line.
type Match struct {
	// Path is the virtual path of the file.
	Path string `json:"path"`
	// Line is the 1-based line number.
	Line int `json:"line"`
	// Column is the 1-based byte column of the first match in the line.
	Column int `json:"column"`
	// Text is the line without its line ending, clipped around the first
	// match to at most Limits.MaxLineBytes (plus "…" marks) when longer.
	Text    string `json:"text"`
	Clipped bool   `json:"clipped,omitempty"`
}

// newMatch builds a Match from a raw line (its line ending still attached)
// and the offset of the first match; both engines call it, so a line looks
// the same whichever engine found it.
func newMatch(path string, num int, line []byte, at, limit int) Match {
	line = trimEOL(line)
	at = max(0, min(at, len(line)))
	m := Match{Path: path, Line: num, Column: at + 1}
	if len(line) <= limit {
		m.Text = string(line)
		return m
	}
	// Show a little context before the match and as much after as fits.
	start := max(0, at-limit/4)
	for start > 0 && start < len(line) && !utf8.RuneStart(line[start]) {
		start++
	}
	end := min(len(line), start+limit)
	for end < len(line) && end > start && !utf8.RuneStart(line[end]) {
		end--
	}
	text := string(line[start:end])
	if start > 0 {
		text = "…" + text
	}
	if end < len(line) {
		text += "…"
	}
	m.Text, m.Clipped = text, true
	return m
}

func trimEOL(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
	}
	return line
}

// trimNL drops the line's "\n" only: a "\r" before it is part of the line
// for matching, as it is for rg without --crlf.
func trimNL(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		return line[:n-1]
	}
	return line
}
