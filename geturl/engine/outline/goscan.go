package outline

import (
	"go/token"
	"strconv"
)

// goScan outlines Go source larger than MaxParseBytes from its tokens,
// without a syntax tree: imports, funcs and methods, types, consts and
// vars at the top level, with the lines go/parser gives them. Nothing is
// kept but the current token (the tokenizer allocates nothing), so memory
// does not grow with the file. Syntax errors are not reported (no
// ParseError); the scan recovers at the next top-level semicolon. Lines
// are the file's own: //line directives, which go/parser applies, are
// not.
func goScan(src []byte, o *Outline) error {
	g := &goTokens{lx: goLexer{src: src, line: 1}}
	if len(src) >= 3 && string(src[:3]) == "\xEF\xBB\xBF" {
		g.lx.pos = 3 // a byte order mark, as go/scanner skips it
	}
	g.next()
	if g.tok != token.PACKAGE {
		return ErrNotGo
	}
	if g.next(); g.tok != token.IDENT {
		return ErrNotGo
	}
	g.skipSpec(0)
	o.Scanned = true
	for g.tok != token.EOF {
		var ok bool
		switch g.tok {
		case token.IMPORT:
			ok = g.group(func(d int) bool { return g.importSpec(o, d) })
		case token.FUNC:
			ok = g.funcDecl(o)
		case token.TYPE:
			ok = g.group(func(d int) bool { return g.typeSpec(o, d) })
		case token.VAR, token.CONST:
			kind := "var"
			if g.tok == token.CONST {
				kind = "const"
			}
			ok = g.group(func(d int) bool { return g.valueSpec(o, kind, d) })
		default:
			g.skipSpec(0)
			ok = true
		}
		if !ok {
			o.Truncated = true
			return nil
		}
	}
	return nil
}

// goTokens is the token stream: the current token, its bracket depth (an
// opener and its closer have the depth outside them), and the line the
// last token before it ended on.
type goTokens struct {
	lx goLexer

	tok        token.Token
	start, end int // the current token's bytes
	line       int // the line it starts on
	depth      int

	level       int // depth after the current token
	endLine     int // the line the current token ends on
	prevEndLine int // that of the last token before it, inserted semicolons aside
	inserted    bool
}

func (g *goTokens) next() {
	if g.tok != token.SEMICOLON || !g.inserted {
		g.prevEndLine = g.endLine
	}
	g.tok, g.start, g.end, g.line, g.inserted = g.lx.scan()
	g.endLine = g.lx.line
	switch {
	case g.inserted:
		g.endLine = g.line
	case g.end > g.start && g.lx.src[g.end-1] == '\n':
		// An unterminated raw string ends with the source's last line
		// break: it ends on that line, not after it.
		g.endLine--
	}
	switch g.tok {
	case token.RPAREN, token.RBRACK, token.RBRACE:
		g.level = max(g.level-1, 0)
	}
	g.depth = g.level
	switch g.tok {
	case token.LPAREN, token.LBRACK, token.LBRACE:
		g.level++
	}
}

// lit is the current token's text.
func (g *goTokens) lit() string { return string(g.lx.src[g.start:g.end]) }

// skipSpec consumes a spec (or a declaration, at depth 0) up to and
// including its semicolon at depth d, or up to the ")" closing its group,
// and returns its end line: where its last token ends, as an ast node's
// End() gives it.
func (g *goTokens) skipSpec(d int) int {
	for g.tok != token.EOF {
		if g.depth < d {
			return g.prevEndLine // the group's ")": not consumed
		}
		if g.tok == token.SEMICOLON && g.depth == d {
			end := g.prevEndLine
			g.next()
			return end
		}
		g.next()
	}
	return g.prevEndLine
}

// group reads a declaration of specs at the keyword: one spec, or "(" and
// specs up to ")". spec reads one spec at depth d, through its end; it
// returns false when a bound stops the outline.
func (g *goTokens) group(spec func(d int) bool) bool {
	if g.next(); g.tok != token.LPAREN {
		return spec(0)
	}
	g.next()
	for g.tok != token.EOF && g.depth >= 1 {
		if g.tok == token.SEMICOLON {
			g.next()
			continue
		}
		if !spec(1) {
			return false
		}
	}
	g.skipSpec(0) // ")" and the semicolon after it
	return true
}

func (g *goTokens) importSpec(o *Outline, d int) bool {
	im := Import{Line: g.line, Kind: "import"}
	switch g.tok {
	case token.IDENT:
		im.Name = g.lit()
		g.next()
	case token.PERIOD:
		im.Name = "."
		g.next()
	}
	if g.tok == token.STRING {
		lit := g.lit()
		mod, err := strconv.Unquote(lit)
		if err != nil {
			mod = lit
		}
		im.Module = clip(mod)
		if len(o.Imports) == MaxImports {
			o.Truncated = true // as go/parser's outline: declarations go on
		} else {
			o.Imports = append(o.Imports, im)
		}
	}
	g.skipSpec(d)
	return true
}

func (g *goTokens) typeSpec(o *Outline, d int) bool {
	if g.tok != token.IDENT {
		g.skipSpec(d)
		return true
	}
	name := g.lit()
	td := Decl{Line: g.line, Kind: "type", Name: name, Exported: token.IsExported(name)}
	g.next()
	array := false
	if g.tok == token.LBRACK {
		// [N]T is an array type, [T any] type parameters (as go/parser
		// decides: an expression alone before "]" is a length).
		open := g.depth
		g.next()
		if g.tok == token.IDENT {
			g.next()
			array = g.tok == token.RBRACK || g.tok == token.PERIOD
		} else {
			array = true
		}
		for g.tok != token.EOF && !(g.tok == token.RBRACK && g.depth == open) {
			g.next()
		}
		g.next()
	}
	switch {
	case array:
	case g.tok == token.ASSIGN:
		td.Detail = "alias"
	case g.tok == token.STRUCT:
		td.Detail = "struct"
	case g.tok == token.INTERFACE:
		td.Detail = "interface"
	case g.tok == token.FUNC:
		td.Detail = "func"
	}
	td.EndLine = g.skipSpec(d)
	return addDecl(o, td)
}

func (g *goTokens) valueSpec(o *Outline, kind string, d int) bool {
	type name struct {
		name string
		line int
	}
	var names []name
	for g.tok == token.IDENT {
		if len(names) <= MaxDecls {
			names = append(names, name{g.lit(), g.line})
		}
		if g.next(); g.tok != token.COMMA {
			break
		}
		g.next()
	}
	end := g.skipSpec(d)
	for _, n := range names {
		if n.name == "_" {
			continue
		}
		if !addDecl(o, Decl{Line: n.line, EndLine: end, Kind: kind, Name: n.name, Exported: token.IsExported(n.name)}) {
			return false
		}
	}
	return true
}

func (g *goTokens) funcDecl(o *Outline) bool {
	fd := Decl{Line: g.line, Kind: "func"}
	g.next()
	if g.tok == token.LPAREN {
		fd.Parent = g.receiver()
		if fd.Parent != "" {
			fd.Kind = "method"
		}
	}
	if g.tok != token.IDENT {
		g.skipSpec(0)
		return true
	}
	fd.Name = g.lit()
	fd.Exported = token.IsExported(fd.Name)
	fd.EndLine = g.skipSpec(0)
	return addDecl(o, fd)
}

// maxReceiverTokens bounds the receiver a method's Parent is printed from.
const maxReceiverTokens = 64

// receiver reads a method's receiver list from its "(" through its ")"
// and prints the type of its first field as exprString does: T, *T, T[K],
// *T[K, V] ("?" for what exprString does not print). An empty list is ""
// (go/parser: no receiver).
func (g *goTokens) receiver() string {
	open := g.depth
	var items []recvTok
	for g.next(); g.tok != token.EOF && !(g.tok == token.RPAREN && g.depth == open); g.next() {
		if len(items) < maxReceiverTokens {
			lit := ""
			if g.tok == token.IDENT {
				lit = g.lit()
			}
			items = append(items, recvTok{g.tok, lit})
		}
	}
	g.next()
	if len(items) == 0 {
		return ""
	}
	items = firstField(items)
	// A receiver name comes before its type: "x T", "x *T", "x (T)".
	if len(items) > 1 && items[0].tok == token.IDENT {
		switch items[1].tok {
		case token.IDENT, token.MUL, token.LPAREN:
			items = items[1:]
		}
	}
	return clip(typeString(items))
}

type recvTok struct {
	tok token.Token
	lit string
}

// firstField cuts a parameter list at its first comma outside brackets.
func firstField(items []recvTok) []recvTok {
	depth := 0
	for i, it := range items {
		switch it.tok {
		case token.LPAREN, token.LBRACK, token.LBRACE:
			depth++
		case token.RPAREN, token.RBRACK, token.RBRACE:
			depth--
		case token.COMMA:
			if depth == 0 {
				return items[:i]
			}
		}
	}
	return items
}

// typeString prints the tokens of a receiver type as exprString prints
// its syntax: identifiers, selectors, pointers, parentheses (dropped) and
// instantiations; anything else is "?".
func typeString(items []recvTok) string {
	for len(items) >= 2 && items[0].tok == token.LPAREN && items[len(items)-1].tok == token.RPAREN {
		items = items[1 : len(items)-1]
	}
	if len(items) == 0 {
		return "?"
	}
	if items[0].tok == token.MUL {
		return "*" + typeString(items[1:])
	}
	if items[0].tok != token.IDENT {
		return "?"
	}
	name, i := items[0].lit, 1
	for i+1 < len(items) && items[i].tok == token.PERIOD && items[i+1].tok == token.IDENT {
		name += "." + items[i+1].lit
		i += 2
	}
	rest := items[i:]
	if len(rest) == 0 {
		return name
	}
	if rest[0].tok != token.LBRACK || rest[len(rest)-1].tok != token.RBRACK || len(rest) == 2 {
		return "?"
	}
	var args []string
	depth, from := 0, 1
	for j := 1; j < len(rest); j++ {
		switch rest[j].tok {
		case token.LPAREN, token.LBRACK, token.LBRACE:
			depth++
		case token.RPAREN, token.RBRACE:
			depth--
		case token.RBRACK:
			if depth > 0 {
				depth--
				continue
			}
			fallthrough
		case token.COMMA:
			if depth == 0 {
				args = append(args, typeString(rest[from:j]))
				from = j + 1
			}
		}
	}
	out := name + "["
	for k, a := range args {
		if k > 0 {
			out += ", "
		}
		out += a
	}
	return out + "]"
}

// addDecl appends d within MaxDecls; false (and Truncated) past it.
func addDecl(o *Outline, d Decl) bool {
	if len(o.Decls) == MaxDecls {
		o.Truncated = true
		return false
	}
	d.Name = clip(d.Name)
	o.Decls = append(o.Decls, d)
	return true
}
