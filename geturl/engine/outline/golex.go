package outline

import "go/token"

// goLexer cuts Go source into the tokens goScan reads, as go/scanner
// does, semicolon insertion included, but allocating nothing: it hands
// back offsets, not literal strings, and counts lines as it goes instead
// of keeping a table of them. Only what an outline needs is told apart:
// keywords, identifiers, string literals, other literals (token.INT),
// semicolons and the operators and delimiters (anything it does not know
// is token.ILLEGAL, one byte).
type goLexer struct {
	src  []byte
	pos  int
	line int  // the line of src[pos]
	semi bool // a line break here ends a statement
}

// scan returns the next token, its bytes and the line it starts on.
// inserted marks a semicolon that stands for a line break (or the end).
func (l *goLexer) scan() (tok token.Token, start, end, line int, inserted bool) {
	for {
		if l.pos >= len(l.src) {
			if l.semi {
				l.semi = false
				return token.SEMICOLON, l.pos, l.pos, l.line, true
			}
			return token.EOF, l.pos, l.pos, l.line, false
		}
		c := l.src[l.pos]
		switch {
		case c == '\n':
			if l.semi {
				l.semi = false
				return token.SEMICOLON, l.pos, l.pos, l.line, true
			}
			l.pos++
			l.line++
			continue
		case c == ' ' || c == '\t' || c == '\r':
			l.pos++
			continue
		case c == '/' && l.peek(1) == '/':
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.pos++
			}
			continue
		case c == '/' && l.peek(1) == '*':
			at, atLine := l.pos, l.line
			l.pos += 2
			newline := false
			for l.pos < len(l.src) && !(l.src[l.pos] == '*' && l.peek(1) == '/') {
				if l.src[l.pos] == '\n' {
					l.line++
					newline = true
				}
				l.pos++
			}
			l.pos = min(l.pos+2, len(l.src))
			if newline && l.semi {
				// A comment across lines ends the statement like a line
				// break; go/scanner places the semicolon at the comment.
				l.semi = false
				return token.SEMICOLON, at, at, atLine, true
			}
			continue
		}
		start, line = l.pos, l.line
		tok = l.token(c)
		return tok, start, l.pos, line, false
	}
}

func (l *goLexer) peek(n int) byte {
	if l.pos+n < len(l.src) {
		return l.src[l.pos+n]
	}
	return 0
}

// token scans the token starting with c at l.pos.
func (l *goLexer) token(c byte) token.Token {
	switch {
	case isGoLetter(c):
		start := l.pos
		for l.pos < len(l.src) && (isGoLetter(l.src[l.pos]) || isDigit(l.src[l.pos])) {
			l.pos++
		}
		tok := goKeyword(l.src[start:l.pos])
		switch tok {
		case token.IDENT, token.BREAK, token.CONTINUE, token.FALLTHROUGH, token.RETURN:
			l.semi = true
		default:
			l.semi = false
		}
		return tok
	case isDigit(c) || c == '.' && isDigit(l.peek(1)):
		l.number()
		l.semi = true
		return token.INT
	case c == '"' || c == '\'':
		l.quoted(c)
		l.semi = true
		if c == '\'' {
			return token.INT
		}
		return token.STRING
	case c == '`':
		l.pos++
		for l.pos < len(l.src) && l.src[l.pos] != '`' {
			if l.src[l.pos] == '\n' {
				l.line++
			}
			l.pos++
		}
		l.pos = min(l.pos+1, len(l.src))
		l.semi = true
		return token.STRING
	}
	for _, op := range goOps[c] {
		if hasPrefix(l.src[l.pos:], op.text) {
			l.pos += len(op.text)
			switch op.tok {
			case token.RPAREN, token.RBRACK, token.RBRACE, token.INC, token.DEC:
				l.semi = true
			default:
				l.semi = false
			}
			return op.tok
		}
	}
	l.pos++
	l.semi = false
	return token.ILLEGAL
}

// number skips a number literal: digits, letters (bases, exponents,
// suffixes), dots, underscores, and a sign after an exponent (e or E in
// decimal, p or P in hexadecimal).
func (l *goLexer) number() {
	hex := l.src[l.pos] == '0' && (l.peek(1) == 'x' || l.peek(1) == 'X')
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		if isGoLetter(c) || isDigit(c) || c == '.' {
			l.pos++
			continue
		}
		if (c == '+' || c == '-') && l.pos > 0 {
			p := l.src[l.pos-1] | 0x20
			if hex && p == 'p' || !hex && p == 'e' {
				l.pos++
				continue
			}
		}
		return
	}
}

// quoted skips a string or rune literal; a line break or the end of the
// source ends a broken one.
func (l *goLexer) quoted(q byte) {
	l.pos++
	for l.pos < len(l.src) {
		switch l.src[l.pos] {
		case q:
			l.pos++
			return
		case '\\':
			if l.peek(1) == '\n' {
				l.pos++ // the line break ends it, as below
				return
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

// isGoLetter: letters, _ and any byte of a multi-byte UTF-8 sequence
// (identifiers may be Unicode letters; nothing else outside literals and
// comments is non-ASCII in valid source).
func isGoLetter(c byte) bool { return c == '_' || c >= 0x80 || c|0x20 >= 'a' && c|0x20 <= 'z' }

// goKeyword is the keyword spelled b, or token.IDENT.
func goKeyword(b []byte) token.Token {
	if len(b) < 2 || len(b) > 11 || b[0] < 'b' || b[0] > 'v' {
		return token.IDENT
	}
	switch string(b) {
	case "break":
		return token.BREAK
	case "case":
		return token.CASE
	case "chan":
		return token.CHAN
	case "const":
		return token.CONST
	case "continue":
		return token.CONTINUE
	case "default":
		return token.DEFAULT
	case "defer":
		return token.DEFER
	case "else":
		return token.ELSE
	case "fallthrough":
		return token.FALLTHROUGH
	case "for":
		return token.FOR
	case "func":
		return token.FUNC
	case "go":
		return token.GO
	case "goto":
		return token.GOTO
	case "if":
		return token.IF
	case "import":
		return token.IMPORT
	case "interface":
		return token.INTERFACE
	case "map":
		return token.MAP
	case "package":
		return token.PACKAGE
	case "range":
		return token.RANGE
	case "return":
		return token.RETURN
	case "select":
		return token.SELECT
	case "struct":
		return token.STRUCT
	case "switch":
		return token.SWITCH
	case "type":
		return token.TYPE
	case "var":
		return token.VAR
	}
	return token.IDENT
}

type goOp struct {
	text string
	tok  token.Token
}

// goOps are Go's operators and delimiters by first byte, longest first.
var goOps = func() (t [256][]goOp) {
	for n := 3; n >= 1; n-- {
		for tok := token.Token(0); tok < 128; tok++ {
			if s := tok.String(); tok.IsOperator() && len(s) == n {
				t[s[0]] = append(t[s[0]], goOp{s, tok})
			}
		}
	}
	return t
}()
