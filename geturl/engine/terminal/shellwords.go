package terminal

import "strings"

// This file is a small, forgiving reader of POSIX shell syntax, enough for
// the guard rail (guard.go) to see which words stand in command position.
// It is not a shell: it never expands anything, and on input a real shell
// would reject (an unterminated quote) it keeps going with what it has, which
// only ever makes the guard see more, not less.

// simpleCmd is one simple command: its words with quoting removed (expansions
// such as $HOME or ${X} are kept as written, a command substitution becomes
// "$()"), the targets of its output redirections, and the texts fed to its
// standard input by here-documents and here-strings.
type simpleCmd struct {
	words  []string
	writes []string
	stdin  []string
	// pipeIn is the previous command of the pipeline this one reads from.
	pipeIn *simpleCmd
}

// script is a parsed command line: its simple commands in order and the
// bodies of the command and process substitutions found in it, which run too
// and are checked on their own.
type script struct {
	cmds   []*simpleCmd
	nested []string
}

type redirKind int

const (
	redirNone    redirKind = iota
	redirWrite             // >, >>, >|, &>, &>>, <>, >& file
	redirDup               // >&, <& : the target may be a descriptor
	redirRead              // <
	redirHeredoc           // <<, <<-
	redirHerestr           // <<<
)

type heredoc struct {
	cmd   *simpleCmd
	delim string
	strip bool // <<- strips leading tabs
}

type shellParser struct {
	src      string
	i        int
	out      script
	cur      *simpleCmd
	word     strings.Builder
	inWord   bool
	quoted   bool // the current word has a quoted part (so it is no fd number)
	redir    redirKind
	stripTab bool
	pending  []heredoc
}

// parseShell splits src into simple commands.
func parseShell(src string) script {
	p := &shellParser{src: src, cur: &simpleCmd{}}
	p.run()
	return p.out
}

func (p *shellParser) run() {
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch c {
		case ' ', '\t', '\r':
			p.endWord()
			p.i++
		case '\n':
			p.endWord()
			p.endCmd(false)
			p.i++
			p.readHeredocs()
		case ';', '|', '(', ')':
			p.endWord()
			pipe := c == '|' && !p.at(p.i+1, '|')
			p.endCmd(pipe)
			p.i++
			for p.i < len(p.src) && strings.IndexByte(";|&", p.src[p.i]) >= 0 {
				p.i++
			}
		case '&':
			if p.at(p.i+1, '>') {
				p.endWord()
				p.i += 2
				if p.at(p.i, '>') {
					p.i++
				}
				p.redir = redirWrite
				continue
			}
			p.endWord()
			p.endCmd(false)
			p.i++
			for p.i < len(p.src) && strings.IndexByte("&|", p.src[p.i]) >= 0 {
				p.i++
			}
		case '<', '>':
			p.redirection(c)
		case '\'':
			p.inWord = true
			p.quoted = true
			end := strings.IndexByte(p.src[p.i+1:], '\'')
			if end < 0 {
				p.word.WriteString(p.src[p.i+1:])
				p.i = len(p.src)
				continue
			}
			p.word.WriteString(p.src[p.i+1 : p.i+1+end])
			p.i += end + 2
		case '"':
			p.inWord = true
			p.quoted = true
			p.i++
			p.doubleQuoted()
		case '`':
			p.inWord = true
			body, end := backquoted(p.src, p.i+1)
			p.out.nested = append(p.out.nested, body)
			p.word.WriteString("$()")
			p.i = end
		case '\\':
			p.inWord = true
			p.quoted = true
			if p.i+1 < len(p.src) {
				if p.src[p.i+1] != '\n' {
					p.word.WriteByte(p.src[p.i+1])
				}
				p.i += 2
				continue
			}
			p.i++
		case '$':
			p.inWord = true
			p.dollar()
		case '#':
			if p.inWord {
				p.word.WriteByte(c)
				p.i++
				continue
			}
			if nl := strings.IndexByte(p.src[p.i:], '\n'); nl >= 0 {
				p.i += nl
			} else {
				p.i = len(p.src)
			}
		default:
			p.inWord = true
			p.word.WriteByte(c)
			p.i++
		}
	}
	p.endWord()
	p.endCmd(false)
}

func (p *shellParser) at(i int, c byte) bool { return i < len(p.src) && p.src[i] == c }

// redirection reads a redirection operator at p.i (c is '<' or '>'). A word
// of digits right before it is its descriptor number, not an argument.
func (p *shellParser) redirection(c byte) {
	if p.inWord && !p.quoted && allDigits(p.word.String()) {
		p.word.Reset()
		p.inWord = false
	}
	p.endWord()
	if p.at(p.i+1, '(') { // process substitution <(…) or >(…)
		body, end := balanced(p.src, p.i+2)
		p.out.nested = append(p.out.nested, body)
		p.inWord = true
		p.word.WriteString("$()")
		p.i = end
		return
	}
	rest := p.src[p.i:]
	switch {
	case c == '<' && strings.HasPrefix(rest, "<<<"):
		p.redir, p.i = redirHerestr, p.i+3
	case c == '<' && strings.HasPrefix(rest, "<<-"):
		p.redir, p.stripTab, p.i = redirHeredoc, true, p.i+3
	case c == '<' && strings.HasPrefix(rest, "<<"):
		p.redir, p.stripTab, p.i = redirHeredoc, false, p.i+2
	case c == '<' && strings.HasPrefix(rest, "<>"):
		p.redir, p.i = redirWrite, p.i+2
	case c == '<' && strings.HasPrefix(rest, "<&"):
		p.redir, p.i = redirDup, p.i+2
	case c == '<':
		p.redir, p.i = redirRead, p.i+1
	case strings.HasPrefix(rest, ">>"), strings.HasPrefix(rest, ">|"):
		p.redir, p.i = redirWrite, p.i+2
	case strings.HasPrefix(rest, ">&"):
		p.redir, p.i = redirDup, p.i+2
	default:
		p.redir, p.i = redirWrite, p.i+1
	}
}

// doubleQuoted reads the inside of "…" from p.i, leaving p.i after the
// closing quote. Backslash escapes only $ ` " \ and newline there.
func (p *shellParser) doubleQuoted() {
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch c {
		case '"':
			p.i++
			return
		case '\\':
			if p.i+1 < len(p.src) && strings.IndexByte("$`\"\\\n", p.src[p.i+1]) >= 0 {
				if p.src[p.i+1] != '\n' {
					p.word.WriteByte(p.src[p.i+1])
				}
				p.i += 2
				continue
			}
			p.word.WriteByte(c)
			p.i++
		case '`':
			body, end := backquoted(p.src, p.i+1)
			p.out.nested = append(p.out.nested, body)
			p.word.WriteString("$()")
			p.i = end
		case '$':
			p.dollar()
		default:
			p.word.WriteByte(c)
			p.i++
		}
	}
}

// dollar reads an expansion starting at the $ at p.i. Parameter expansions
// are kept as written; command substitutions are recorded and stand in the
// word as "$()"; arithmetic becomes "0"; $'…' is decoded.
func (p *shellParser) dollar() {
	rest := p.src[p.i:]
	switch {
	case strings.HasPrefix(rest, "$(("):
		_, end := balanced(p.src, p.i+2)
		p.word.WriteByte('0')
		p.i = end
	case strings.HasPrefix(rest, "$("):
		body, end := balanced(p.src, p.i+2)
		p.out.nested = append(p.out.nested, body)
		p.word.WriteString("$()")
		p.i = end
	case strings.HasPrefix(rest, "${"):
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			end = len(rest) - 1
		}
		p.word.WriteString(rest[:end+1])
		p.i += end + 1
	case strings.HasPrefix(rest, "$'"):
		p.quoted = true
		p.i += 2
		p.ansiC()
	default:
		p.word.WriteByte('$')
		p.i++
	}
}

// ansiC decodes the inside of $'…' (the common escapes; others verbatim).
func (p *shellParser) ansiC() {
	for p.i < len(p.src) {
		c := p.src[p.i]
		if c == '\'' {
			p.i++
			return
		}
		if c != '\\' || p.i+1 >= len(p.src) {
			p.word.WriteByte(c)
			p.i++
			continue
		}
		e := p.src[p.i+1]
		p.i += 2
		switch e {
		case 'n':
			p.word.WriteByte('\n')
		case 't':
			p.word.WriteByte('\t')
		case 'x':
			v, n := 0, 0
			for n < 2 && p.i < len(p.src) && hexVal(p.src[p.i]) >= 0 {
				v = v*16 + hexVal(p.src[p.i])
				p.i++
				n++
			}
			if n == 0 {
				p.word.WriteString(`\x`)
			} else {
				p.word.WriteByte(byte(v))
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, n := int(e-'0'), 1
			for n < 3 && p.i < len(p.src) && p.src[p.i] >= '0' && p.src[p.i] <= '7' {
				v = v*8 + int(p.src[p.i]-'0')
				p.i++
				n++
			}
			p.word.WriteByte(byte(v))
		default:
			p.word.WriteByte(e)
		}
	}
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func (p *shellParser) endWord() {
	if !p.inWord {
		return
	}
	w := p.word.String()
	p.word.Reset()
	p.inWord, p.quoted = false, false
	switch p.redir {
	case redirNone:
		p.cur.words = append(p.cur.words, w)
	case redirWrite:
		p.cur.writes = append(p.cur.writes, w)
	case redirDup:
		if !allDigits(w) && w != "-" {
			p.cur.writes = append(p.cur.writes, w)
		}
	case redirHeredoc:
		p.pending = append(p.pending, heredoc{cmd: p.cur, delim: w, strip: p.stripTab})
	case redirHerestr:
		p.cur.stdin = append(p.cur.stdin, w)
	}
	p.redir = redirNone
}

func (p *shellParser) endCmd(pipe bool) {
	c := p.cur
	p.cur = &simpleCmd{}
	p.redir = redirNone // an operator without its target is a syntax error
	if len(c.words) == 0 && len(c.writes) == 0 && len(c.stdin) == 0 && !p.pendingFor(c) {
		return
	}
	p.out.cmds = append(p.out.cmds, c)
	if pipe {
		p.cur.pipeIn = c
	}
}

func (p *shellParser) pendingFor(c *simpleCmd) bool {
	for _, h := range p.pending {
		if h.cmd == c {
			return true
		}
	}
	return false
}

// readHeredocs consumes the bodies of the here-documents opened on the line
// that just ended, attaching each to the command that opened it.
func (p *shellParser) readHeredocs() {
	for _, h := range p.pending {
		var body strings.Builder
		for p.i < len(p.src) {
			line := p.src[p.i:]
			nl := strings.IndexByte(line, '\n')
			if nl >= 0 {
				line = line[:nl]
				p.i += nl + 1
			} else {
				p.i = len(p.src)
			}
			cmp := line
			if h.strip {
				cmp = strings.TrimLeft(cmp, "\t")
			}
			if cmp == h.delim {
				break
			}
			body.WriteString(line)
			body.WriteByte('\n')
		}
		h.cmd.stdin = append(h.cmd.stdin, body.String())
	}
	p.pending = p.pending[:0]
}

// balanced returns the text from i up to the parenthesis closing an already
// opened one, and the index after it. Quotes inside are honoured.
func balanced(src string, i int) (body string, end int) {
	depth := 1
	for j := i; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '\'':
			k := strings.IndexByte(src[j+1:], '\'')
			if k < 0 {
				return src[i:], len(src)
			}
			j += k + 1
		case '"':
			for j++; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\\' {
					j++
				}
			}
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return src[i:j], j + 1
			}
		}
	}
	return src[i:], len(src)
}

// backquoted returns the body of `…` starting at i and the index after the
// closing backquote.
func backquoted(src string, i int) (body string, end int) {
	var b strings.Builder
	for j := i; j < len(src); j++ {
		switch src[j] {
		case '\\':
			if j+1 < len(src) {
				j++
				b.WriteByte(src[j])
			}
		case '`':
			return b.String(), j + 1
		default:
			b.WriteByte(src[j])
		}
	}
	return b.String(), len(src)
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
