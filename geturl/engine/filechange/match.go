package filechange

import (
	"errors"
	"strings"
	"unicode"
)

// level is how loosely a hunk's lines are compared with the file's. Each
// hunk is looked for at the strictest level first; a looser level is tried
// only when the stricter one finds nothing anywhere in the allowed range.
// Matching only decides where a hunk applies: context lines keep the
// file's own bytes, so a loose match never rewrites them.
type level int

const (
	levelExact      level = iota // byte for byte (line terminators aside)
	levelTrailing                // ignoring whitespace at line ends
	levelWhitespace              // ignoring whitespace at both ends
	levelUnicode                 // also folding typographic dashes, quotes and spaces to ASCII
	levels
)

func (l level) String() string {
	return [...]string{"exact", "trailing_whitespace", "whitespace", "unicode"}[l]
}

var errTooComplex = errors.New("too much matching work")

// matcher finds hunks in one file within a work budget shared by a whole
// patch (line comparisons, plus lines normalised).
type matcher struct {
	budget int64
	file   []line
	keys   [levels][]string // the file's lines per level, built on first use
}

func (m *matcher) reset(file []line) {
	m.file = file
	m.keys = [levels][]string{}
}

func normalize(s string, l level) string {
	switch l {
	case levelTrailing:
		return strings.TrimRightFunc(s, unicode.IsSpace)
	case levelWhitespace:
		return strings.TrimSpace(s)
	case levelUnicode:
		return strings.TrimSpace(strings.Map(foldRune, s))
	}
	return s
}

// foldRune maps the typographic look-alikes agents (and URL readers)
// substitute for ASCII punctuation.
func foldRune(r rune) rune {
	switch r {
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
		return '-'
	case '\u2018', '\u2019', '\u201A', '\u201B':
		return '\''
	case '\u201C', '\u201D', '\u201E', '\u201F':
		return '"'
	case '\u00A0', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007', '\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
		return ' '
	}
	return r
}

func (m *matcher) fileKeys(l level) []string {
	if l == levelExact {
		if m.keys[l] == nil {
			k := make([]string, len(m.file))
			for i, fl := range m.file {
				k[i] = fl.text
			}
			m.keys[l] = k
		}
		return m.keys[l]
	}
	if m.keys[l] == nil {
		m.budget -= int64(len(m.file))
		k := make([]string, len(m.file))
		for i, fl := range m.file {
			k[i] = normalize(fl.text, l)
		}
		m.keys[l] = k
	}
	return m.keys[l]
}

// seek finds pat in the file at or after line index start (with eof: only
// as the file's last lines), trying each level up to max in turn. It
// returns the index and the level of the first match, or -1.
func (m *matcher) seek(pat []string, start int, eof bool, max level) (int, level, error) {
	if len(pat) == 0 {
		if eof {
			return len(m.file), levelExact, nil
		}
		return start, levelExact, nil
	}
	last := len(m.file) - len(pat)
	if last < start {
		return -1, 0, nil
	}
	first := start
	if eof {
		first = last
	}
	for l := levelExact; l <= max; l++ {
		keys := m.fileKeys(l)
		p := make([]string, len(pat))
		for i, s := range pat {
			p[i] = normalize(s, l)
		}
		for at := first; at <= last; at++ {
			j := 0
			for j < len(p) && keys[at+j] == p[j] {
				j++
			}
			m.budget -= int64(j + 1)
			if j == len(p) {
				return at, l, nil
			}
			if m.budget < 0 {
				return -1, 0, errTooComplex
			}
		}
	}
	return -1, 0, nil
}
