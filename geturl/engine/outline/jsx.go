package outline

// jsxStart reports whether the "<" at l.pos (in operand position) opens a
// JSX element: a fragment "<>" or a tag name, but not a TSX generic arrow
// function's type parameters ("<T,>" or "<T extends U>").
func (l *lexer) jsxStart() bool {
	i := l.pos + 1
	if i < len(l.src) && l.src[i] == '>' {
		return true
	}
	if i >= len(l.src) || !isIdentStart(l.src[i]) {
		return false
	}
	for i < len(l.src) && (isIdentPart(l.src[i]) || l.src[i] == '.' || l.src[i] == ':' || l.src[i] == '-') {
		i++
	}
	for i < len(l.src) && (l.src[i] == ' ' || l.src[i] == '\t') {
		i++
	}
	if i < len(l.src) && l.src[i] == ',' {
		return false
	}
	if rest := l.src[i:]; len(rest) >= 8 && string(rest[:7]) == "extends" && !isIdentPart(rest[7]) {
		return false
	}
	return true
}

// jsxElement skips one JSX element or fragment starting at "<": its
// attributes (strings without escapes, {expressions}, element values) and
// its children (text, {expressions}, nested elements) up to its closing
// tag. Expressions are scanned as code one level deeper.
func (l *lexer) jsxElement() {
	if l.nesting >= maxNesting {
		l.stopped = true
		return
	}
	l.nesting++
	defer func() { l.nesting-- }()
	l.pos++ // <
	for l.pos < len(l.src) && !l.stopped {
		c := l.src[l.pos]
		switch {
		case c == '/' && l.peek(1) == '>':
			l.pos += 2
			return
		case c == '>':
			l.pos++
			l.jsxChildren()
			return
		case c == '{':
			l.pos++
			l.nested(func() { l.code(true) })
		case c == '"' || c == '\'':
			l.jsxString(c)
		case c == '<':
			l.jsxElement()
		case c == '/' && l.peek(1) == '*':
			l.blockComment()
		case c == '\n':
			l.line++
			l.pos++
		default:
			l.pos++
		}
	}
}

// jsxChildren skips children up to and including the closing tag.
func (l *lexer) jsxChildren() {
	for l.pos < len(l.src) && !l.stopped {
		c := l.src[l.pos]
		switch {
		case c == '<' && l.peek(1) == '/':
			for l.pos < len(l.src) && l.src[l.pos] != '>' {
				if l.src[l.pos] == '\n' {
					l.line++
				}
				l.pos++
			}
			l.pos = min(l.pos+1, len(l.src))
			return
		case c == '<':
			l.jsxElement()
		case c == '{':
			l.pos++
			l.nested(func() { l.code(true) })
		case c == '\n':
			l.line++
			l.pos++
		default:
			l.pos++
		}
	}
}

// jsxString skips an attribute string; JSX strings have no escapes.
func (l *lexer) jsxString(q byte) {
	l.pos++
	for l.pos < len(l.src) && l.src[l.pos] != q {
		if l.src[l.pos] == '\n' {
			l.line++
		}
		l.pos++
	}
	l.pos = min(l.pos+1, len(l.src))
}
