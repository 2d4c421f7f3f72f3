package outline

// Options select the JS dialect.
type Options struct {
	// TypeScript enables TS-only declarations (interface, type, enum,
	// namespace, abstract, declare). They are recognized in JS too, where
	// they never occur as statements.
	TypeScript bool
	// JSX makes "<" in expression position start a JSX element (.jsx,
	// .tsx, .js). Off for .ts, where "<T>x" is a type assertion.
	JSX bool
}

type tokKind uint8

const (
	tIdent tokKind = iota
	tPrivate
	tString
	tTemplate
	tNumber
	tRegex
	tPunct
	tJSX
)

// tok is one lexeme. depth is the bracket nesting outside it: an opener
// and its closer have the same depth, everything between a greater one.
type tok struct {
	kind       tokKind
	start, end int32
	line, eol  int32 // first and last line
	depth      int32
	nl         bool // a line break precedes it
}

// lexer turns JS/TS source into tokens, skipping comments and the insides
// of strings, templates, regex literals and JSX text. It always advances,
// so it terminates on any input; nesting past maxNesting stops it.
type lexer struct {
	src   []byte
	opt   Options
	pos   int
	line  int32
	depth int32
	nl    bool
	toks  []tok
	// parens records, for each open "(", whether a keyword that takes a
	// condition (if, while, for, with) precedes it: after its ")" a "/"
	// starts a regex.
	parens    []bool
	lastParen bool // the last ")" closed such a condition
	// exprStart is set at the start of an inner scan (template ${, JSX
	// {): an operand may start there whatever the token before was.
	exprStart bool
	nesting   int
	stopped   bool  // nesting bound hit
	floor     int32 // depth of the current inner scan: closers never go below it

	// sink, when set, receives each token instead of toks (the streaming
	// scan of a large file keeps only what it needs).
	sink func(tok)
	// last is the latest token emitted, n how many were: what decides
	// whether "/" starts a regex, whoever keeps the tokens.
	last tok
	n    int
}

// lex returns every token of src.
func lex(src []byte, opt Options) (toks []tok, stopped bool) {
	l := &lexer{src: src, opt: opt, line: 1}
	l.toks = make([]tok, 0, len(src)/5)
	l.run()
	return l.toks, l.stopped
}

// stream hands every token of src to sink, in order, keeping none.
func stream(src []byte, opt Options, sink func(tok)) (stopped bool) {
	l := &lexer{src: src, opt: opt, line: 1, sink: sink}
	l.run()
	return l.stopped
}

func (l *lexer) run() {
	if len(l.src) > 1 && l.src[0] == '#' && l.src[1] == '!' {
		l.skipLine()
	}
	l.code(false)
}

// emit appends the token that started at start on startLine; nl is whether
// a line break preceded it (taken at its start: a template's inner tokens
// are emitted before the template itself).
func (l *lexer) emit(k tokKind, start int, startLine int32, nl bool) {
	eol := l.line // the line of the token's last byte
	if l.pos > start && l.src[l.pos-1] == '\n' {
		eol--
	}
	t := tok{kind: k, start: int32(start), end: int32(l.pos),
		line: startLine, eol: max(eol, startLine), depth: l.depth, nl: nl}
	if l.sink != nil {
		l.sink(t)
	} else {
		l.toks = append(l.toks, t)
	}
	l.last = t
	l.n++
	l.nl = false
	l.exprStart = false
}

// begin records where a token starts.
func (l *lexer) begin() (start int, line int32, nl bool) {
	nl = l.nl
	l.nl = false
	return l.pos, l.line, nl
}

func (l *lexer) skipLine() {
	for l.pos < len(l.src) && l.src[l.pos] != '\n' {
		l.pos++
	}
}

// code scans code until the end, or with inBrace until the "}" closing the
// brace that was opened before the call (a template ${ or JSX {).
func (l *lexer) code(inBrace bool) {
	base := l.depth
	for l.pos < len(l.src) && !l.stopped {
		c := l.src[l.pos]
		switch {
		case c == '\n':
			l.line++
			l.nl = true
			l.pos++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			l.pos++
		case c == '/' && l.peek(1) == '/':
			l.skipLine()
		case c == '/' && l.peek(1) == '*':
			l.blockComment()
		case c == '"' || c == '\'':
			start, line, nl := l.begin()
			l.str(c)
			l.emit(tString, start, line, nl)
		case c == '`':
			start, line, nl := l.begin()
			l.template()
			l.emit(tTemplate, start, line, nl)
		case c == '/' && l.regexAllowed() && l.regex():
			start, line, nl := l.begin()
			l.skipRegex()
			l.emit(tRegex, start, line, nl)
		case c == '<' && l.opt.JSX && l.regexAllowed() && l.jsxStart():
			start, line, nl := l.begin()
			l.jsxElement()
			l.emit(tJSX, start, line, nl)
		case isIdentStart(c):
			start, line, nl := l.begin()
			for l.pos < len(l.src) && isIdentPart(l.src[l.pos]) {
				l.pos++
			}
			l.emit(tIdent, start, line, nl)
		case c == '#':
			start, line, nl := l.begin()
			l.pos++
			for l.pos < len(l.src) && isIdentPart(l.src[l.pos]) {
				l.pos++
			}
			l.emit(tPrivate, start, line, nl)
		case isDigit(c) || (c == '.' && isDigit(l.peek(1))):
			start, line, nl := l.begin()
			l.number()
			l.emit(tNumber, start, line, nl)
		case c == '}' && inBrace && l.depth == base:
			l.pos++
			return
		default:
			l.punct()
		}
	}
}

func (l *lexer) peek(n int) byte {
	if l.pos+n < len(l.src) {
		return l.src[l.pos+n]
	}
	return 0
}

func (l *lexer) blockComment() {
	l.pos += 2
	for l.pos < len(l.src) {
		if l.src[l.pos] == '\n' {
			l.line++
			l.nl = true
		}
		if l.src[l.pos] == '*' && l.peek(1) == '/' {
			l.pos += 2
			return
		}
		l.pos++
	}
}

// str skips a quoted string. An unescaped line break ends it too (the
// source is broken; recovering at the line keeps the rest usable).
func (l *lexer) str(q byte) {
	l.pos++
	for l.pos < len(l.src) {
		switch c := l.src[l.pos]; c {
		case q:
			l.pos++
			return
		case '\\':
			if l.peek(1) == '\n' {
				l.line++
			}
			l.pos += 2
		case '\n':
			return
		default:
			l.pos++
		}
	}
	l.pos = min(l.pos, len(l.src))
}

// template skips a template literal, scanning each ${…} as code.
func (l *lexer) template() {
	l.pos++
	for l.pos < len(l.src) && !l.stopped {
		switch c := l.src[l.pos]; {
		case c == '`':
			l.pos++
			return
		case c == '\\':
			if l.peek(1) == '\n' {
				l.line++
			}
			l.pos += 2
		case c == '$' && l.peek(1) == '{':
			l.pos += 2
			l.nested(func() { l.code(true) })
		case c == '\n':
			l.line++
			l.pos++
		default:
			l.pos++
		}
	}
	l.pos = min(l.pos, len(l.src))
}

// nested runs an inner scan one level deeper (template ${}, JSX {}),
// within the nesting bound.
func (l *lexer) nested(scan func()) {
	if l.nesting >= maxNesting {
		l.stopped = true
		return
	}
	l.nesting++
	l.depth++
	floor := l.floor
	l.floor = l.depth
	l.exprStart = true
	scan()
	l.floor = floor
	l.depth--
	l.nesting--
	// The construct's own token (emitted next) is what the following
	// regex decision must see, not the inner scan's last token.
	l.exprStart = false
}

// regexAllowed decides whether "/" (or "<" for JSX) starts an operand here,
// from the previous token.
func (l *lexer) regexAllowed() bool {
	if l.n == 0 || l.exprStart {
		return true
	}
	t := l.last
	text := l.src[t.start:t.end]
	switch t.kind {
	case tIdent:
		return operandKeywords[string(text)]
	case tPunct:
		switch string(text) {
		case ")":
			return l.lastParen
		case "]", "++", "--":
			return false
		}
		return true // including "}": a block ended, a statement may start
	}
	return false
}

// operandKeywords are keywords after which an operand (so a regex or JSX)
// starts.
var operandKeywords = map[string]bool{"return": true, "typeof": true, "instanceof": true, "in": true,
	"of": true, "new": true, "delete": true, "void": true, "throw": true, "case": true, "do": true,
	"else": true, "yield": true, "await": true, "extends": true}

// regex reports whether a regex literal starting at "/" closes on its
// line; if not, the "/" is an operator.
func (l *lexer) regex() bool { return l.regexEnd() > 0 }

func (l *lexer) skipRegex() { l.pos = l.regexEnd() }

// regexEnd returns the offset after the regex literal at l.pos (flags
// included), or 0.
func (l *lexer) regexEnd() int {
	i := l.pos + 1
	class := false
	for i < len(l.src) {
		switch c := l.src[i]; {
		case c == '\n':
			return 0
		case c == '\\':
			if i+1 < len(l.src) && l.src[i+1] == '\n' {
				return 0
			}
			i += 2
			continue
		case c == '[':
			class = true
		case c == ']':
			class = false
		case c == '/' && !class:
			i++
			for i < len(l.src) && isIdentPart(l.src[i]) {
				i++
			}
			return i
		}
		i++
	}
	return 0
}

func (l *lexer) number() {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		if isIdentPart(c) || c == '.' {
			l.pos++
			continue
		}
		// An exponent sign: 1e+5.
		if (c == '+' || c == '-') && l.pos > 0 && (l.src[l.pos-1] == 'e' || l.src[l.pos-1] == 'E') &&
			!(l.pos > 1 && (l.src[l.pos-2] == 'x' || l.src[l.pos-2] == 'X')) {
			l.pos++
			continue
		}
		return
	}
}

// puncts are the multi-character operators, longest first.
var puncts = []string{">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
	"=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=",
	"%=", "&=", "|=", "^=", "**", "<<", ">>"}

// punctsByFirst indexes puncts by first byte, keeping the longest-first
// order.
var punctsByFirst = func() (t [256][]string) {
	for _, p := range puncts {
		t[p[0]] = append(t[p[0]], p)
	}
	return t
}()

func hasPrefix(b []byte, p string) bool { return len(b) >= len(p) && string(b[:len(p)]) == p }

func (l *lexer) punct() {
	start, line, nl := l.begin()
	c := l.src[l.pos]
	n := 1
	for _, p := range punctsByFirst[c] {
		if hasPrefix(l.src[l.pos:], p) {
			n = len(p)
			break
		}
	}
	// "?." before a digit is a conditional and a number: a?.5:1
	if n == 2 && c == '?' && isDigit(l.peek(2)) {
		n = 1
	}
	switch c {
	case '(':
		l.parens = append(l.parens, l.condKeyword())
	case ')':
		l.lastParen = false
		if k := len(l.parens); k > 0 {
			l.lastParen = l.parens[k-1]
			l.parens = l.parens[:k-1]
		}
	}
	if (c == ')' || c == ']' || c == '}') && l.depth > l.floor {
		l.depth--
	}
	l.pos += n
	l.emit(tPunct, start, line, nl)
	if c == '{' || c == '(' || c == '[' {
		l.depth++
	}
}

// condKeyword reports whether the token before a "(" is if/while/for/with.
func (l *lexer) condKeyword() bool {
	if l.n == 0 {
		return false
	}
	t := l.last
	if t.kind != tIdent {
		return false
	}
	switch string(l.src[t.start:t.end]) {
	case "if", "while", "for", "with":
		return true
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || c|0x20 >= 'a' && c|0x20 <= 'z'
}
func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '\\' }
