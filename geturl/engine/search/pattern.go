package search

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"strings"
)

// MaxPatternBytes bounds a pattern (the URL's raw= tail is 8 KiB anyway).
const MaxPatternBytes = 8 << 10

// matcher is a compiled grep pattern: what the Go engine runs and what rg
// is told, which mean the same thing.
type matcher struct {
	literal []byte         // case-sensitive literal mode
	re      *regexp.Regexp // every other mode
	prefix  []byte         // re's literal prefix, to skip lines quickly
	// rgArgs selects the pattern for rg; nil when rg cannot be told
	// exactly the same thing (the Go engine runs instead).
	rgArgs []string
}

// compilePattern builds the matcher for a literal or RE2 pattern.
func compilePattern(pattern string, regex, ignoreCase bool) (*matcher, error) {
	switch {
	case pattern == "":
		return nil, ErrEmptyPattern
	case len(pattern) > MaxPatternBytes:
		return nil, &RegexError{Msg: "pattern is too long"}
	}
	if !regex {
		if strings.ContainsAny(pattern, "\n") {
			return nil, ErrMultiline
		}
		if !ignoreCase {
			return &matcher{literal: []byte(pattern), rgArgs: []string{"--fixed-strings", "--regexp", pattern}}, nil
		}
		pattern = regexp.QuoteMeta(pattern)
	}
	if ignoreCase {
		pattern = "(?i)" + pattern
	}
	ast, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, &RegexError{Msg: err.Error()}
	}
	if hasNewline(ast) {
		return nil, ErrMultiline
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, &RegexError{Msg: err.Error()}
	}
	m := &matcher{re: re}
	if p, _ := re.LiteralPrefix(); p != "" {
		m.prefix = []byte(p)
	}
	if rust, ok := toRust(ast); ok {
		m.rgArgs = []string{"--regexp", rust}
	}
	return m, nil
}

// index returns the byte offset of the first match in line, or -1.
func (m *matcher) index(line []byte) int {
	if m.re == nil {
		return bytes.Index(line, m.literal)
	}
	if m.prefix != nil && !bytes.Contains(line, m.prefix) {
		return -1
	}
	loc := m.re.FindIndex(line)
	if loc == nil {
		return -1
	}
	return loc[0]
}

// hasNewline reports a literal line break, which can never match inside one
// line (and which rg refuses outright).
func hasNewline(re *syntax.Regexp) bool {
	if re.Op == syntax.OpLiteral {
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
	}
	for _, sub := range re.Sub {
		if hasNewline(sub) {
			return true
		}
	}
	return false
}
