package search

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// MaxGlobs bounds the include globs of one search, MaxGlobBytes each one.
const (
	MaxGlobs     = 16
	MaxGlobBytes = 256
)

// includeSet is a compiled list of include globs with ripgrep's (gitignore)
// meaning, relative to the directory searched: a glob without a slash
// matches a file's name at any depth (*.ts), one with a slash matches the
// path from the search directory (src/*.ts, /src/**/*.ts); * and ? never
// cross a slash; ** spans directories in **/x, x/** and x/**/y; [a-z] and
// [!a-z] are classes; {a,b} alternates; a backslash escapes. A file is
// searched when any glob matches. Directories are always entered; a glob
// ending in a slash (a directory pattern) therefore matches no file.
type includeSet struct {
	globs []string
	re    []*regexp.Regexp
}

func compileIncludes(globs []string) (*includeSet, error) {
	if len(globs) == 0 {
		return nil, nil
	}
	if len(globs) > MaxGlobs {
		return nil, &GlobError{Glob: globs[MaxGlobs], Msg: "too many include globs"}
	}
	s := &includeSet{}
	for _, g := range globs {
		re, err := globRegexp(g)
		if err != nil {
			return nil, err
		}
		s.globs = append(s.globs, g)
		s.re = append(s.re, re)
	}
	return s, nil
}

// match reports whether the file at rel (slash-separated, relative to the
// search directory) is included.
func (s *includeSet) match(rel string) bool {
	if s == nil {
		return true
	}
	for _, re := range s.re {
		if re != nil && re.MatchString(rel) {
			return true
		}
	}
	return false
}

// globRegexp translates one glob; nil (no error) for a glob that can only
// match directories.
func globRegexp(g string) (*regexp.Regexp, error) {
	bad := func(msg string) error { return &GlobError{Glob: g, Msg: msg} }
	// rg reads a glob as a gitignore line: trailing white space goes
	// unless the last space is escaped.
	if !strings.HasSuffix(g, `\ `) {
		g = strings.TrimRightFunc(g, unicode.IsSpace)
	}
	switch {
	case g == "":
		return nil, bad("empty")
	case len(g) > MaxGlobBytes:
		return nil, bad("too long")
	case strings.HasPrefix(g, "#"):
		return nil, bad("a leading # makes it a comment")
	case strings.HasPrefix(g, "!"):
		return nil, bad("negated globs are not supported; list the files to include")
	case strings.ContainsAny(g, "\x00\n"):
		return nil, bad("contains a NUL or line break")
	case strings.HasSuffix(g, "/"):
		return nil, nil
	}
	p := g
	if !strings.Contains(p, "/") {
		p = "**/" + p
	}
	p = strings.TrimPrefix(p, "/")
	var b strings.Builder
	b.WriteString(`^`)
	if err := globBody(&b, p, false); err != "" {
		return nil, bad(err)
	}
	b.WriteString(`$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, bad("cannot be compiled")
	}
	return re, nil
}

// globBody appends the regexp for glob text p; inBrace disallows nesting.
func globBody(b *strings.Builder, p string, inBrace bool) string {
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case strings.HasPrefix(p[i:], "**"):
			atStart := i == 0 || p[i-1] == '/'
			j := i + 2
			switch {
			case atStart && j == len(p):
				b.WriteString(`.*`)
			case atStart && p[j] == '/':
				b.WriteString(`(?:.*/)?`)
				j++
			default:
				b.WriteString(`[^/]*`) // ** inside a name is just *
			}
			i = j
			continue
		case c == '*':
			b.WriteString(`[^/]*`)
		case c == '?':
			b.WriteString(`[^/]`)
		case c == '\\':
			if i+1 == len(p) {
				return "ends with a backslash"
			}
			i++
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		case c == '[':
			n, err := globClass(b, p[i:])
			if err != "" {
				return err
			}
			i += n
			continue
		case c == '}':
			return "unmatched }"
		case c == '{':
			if inBrace {
				return "nested braces are not supported"
			}
			end := strings.IndexByte(p[i:], '}')
			if end < 0 {
				return "unclosed brace"
			}
			b.WriteString(`(?:`)
			for k, alt := range strings.Split(p[i+1:i+end], ",") {
				if k > 0 {
					b.WriteString(`|`)
				}
				if alt == "" {
					return "empty alternative in braces"
				}
				if err := globBody(b, alt, true); err != "" {
					return err
				}
			}
			b.WriteString(`)`)
			i += end + 1
			continue
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
		i++
	}
	return ""
}

// globClass translates a [...] class at the start of p, returning its length.
func globClass(b *strings.Builder, p string) (int, string) {
	i := 1
	negate := i < len(p) && (p[i] == '!' || p[i] == '^')
	if negate {
		i++
	}
	start := i
	if i < len(p) && p[i] == ']' {
		i++ // a leading ] is literal
	}
	for i < len(p) && p[i] != ']' {
		if p[i] == '[' && i+1 < len(p) && p[i+1] == ':' {
			return 0, "character class names like [:alpha:] are not supported"
		}
		i++
	}
	if i == len(p) {
		return 0, "unclosed ["
	}
	body := []rune(p[start:i])
	b.WriteString(`[`)
	if negate {
		b.WriteString(`^/`)
	}
	for k := 0; k < len(body); k++ {
		if k+2 < len(body) && body[k+1] == '-' {
			if body[k] > body[k+2] {
				return 0, "inverted range in a class"
			}
			fmt.Fprintf(b, `\x{%x}-\x{%x}`, body[k], body[k+2])
			k += 2
			continue
		}
		fmt.Fprintf(b, `\x{%x}`, body[k])
	}
	b.WriteString(`]`)
	return i + 1, ""
}
