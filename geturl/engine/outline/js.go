package outline

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// JS outlines JavaScript or TypeScript source. It never fails.
func JS(src []byte, opt Options) Outline {
	lang := "javascript"
	if opt.TypeScript {
		lang = "typescript"
	}
	o := Outline{Language: lang, Imports: []Import{}, Decls: []Decl{}}
	if len(src) > MaxSourceBytes {
		src, o.Truncated = src[:MaxSourceBytes], true
	}
	o.Lines = countLines(src)
	if len(src) > MaxParseBytes {
		jsScan(src, opt, &o)
		return o
	}
	toks, stopped := lex(src, opt)
	if stopped {
		o.Truncated = true
	}
	s := &jsOutliner{src: src, toks: toks, o: &o}
	s.run()
	return o
}

type jsOutliner struct {
	src  []byte
	toks []tok
	o    *Outline
	// exportedNames are local names listed in "export { a, b as c }".
	exportedNames map[string]bool
	// skip is the first token after a static import or re-export: the
	// tokens before it are neither statements nor dynamic imports.
	skip int
}

func (s *jsOutliner) run() {
	for i := range s.toks {
		if i < s.skip {
			continue
		}
		if s.toks[i].depth == 0 && s.stmtStart(i, 0) {
			if s.statement(i); i < s.skip {
				continue
			}
		}
		s.dynamicImport(i)
	}
	s.markExported()
}

// markExported marks the top-level declarations an export list named.
func (s *jsOutliner) markExported() {
	for i := range s.o.Decls {
		d := &s.o.Decls[i]
		if d.Parent == "" && s.exportedNames[d.Name] {
			d.Exported = true
		}
	}
}

// --- token helpers ---

// raw is token i's bytes (nil out of range); comparing string(raw) with a
// constant or using it as a map key does not allocate.
func (s *jsOutliner) raw(i int) []byte {
	if i < 0 || i >= len(s.toks) {
		return nil
	}
	return s.src[s.toks[i].start:s.toks[i].end]
}

func (s *jsOutliner) text(i int) string { return string(s.raw(i)) }

func (s *jsOutliner) ident(i int, words ...string) bool {
	if i < 0 || i >= len(s.toks) || s.toks[i].kind != tIdent {
		return false
	}
	if len(words) == 0 {
		return true
	}
	t := s.raw(i)
	for _, w := range words {
		if string(t) == w {
			return true
		}
	}
	return false
}

func (s *jsOutliner) punct(i int, p string) bool {
	return i >= 0 && i < len(s.toks) && s.toks[i].kind == tPunct && string(s.raw(i)) == p
}

func (s *jsOutliner) kind(i int) tokKind {
	if i < 0 || i >= len(s.toks) {
		return 255
	}
	return s.toks[i].kind
}

// next returns the next token after i at i's depth, or -1 when the
// enclosing bracket closes first.
func (s *jsOutliner) next(i int) int {
	if i < 0 || i >= len(s.toks) {
		return -1
	}
	d := s.toks[i].depth
	for k := i + 1; k < len(s.toks); k++ {
		switch td := s.toks[k].depth; {
		case td == d:
			return k
		case td < d:
			return -1
		}
	}
	return -1
}

// prev returns the previous token before i at depth d, not before lo.
func (s *jsOutliner) prev(i int, d int32, lo int) int {
	for k := i - 1; k >= lo; k-- {
		switch td := s.toks[k].depth; {
		case td == d:
			return k
		case td < d:
			return -1
		}
	}
	return -1
}

// contTrail: after these a line break does not end a statement.
var contTrail = map[string]bool{
	"export": true, "default": true, "declare": true, "async": true, "abstract": true, "new": true,
	"typeof": true, "extends": true, "implements": true, "in": true, "instanceof": true, "of": true,
	"await": true, "yield": true, "void": true, "delete": true, "static": true, "public": true,
	"private": true, "protected": true, "readonly": true, "override": true, "const": true, "let": true,
	"var": true, "function": true, "class": true, "interface": true, "enum": true, "import": true, "as": true,
	"satisfies": true, "keyof": true, "namespace": true, "module": true, "accessor": true, "from": true,
}

// contLead: a line starting with these continues the previous one.
var contLead = map[string]bool{
	".": true, "?.": true, ",": true, "=": true, "=>": true, ")": true, "]": true, "}": true, ":": true,
	"?": true, "??": true, "||": true, "&&": true, "|": true, "&": true, "^": true, "+": true, "*": true,
	"/": true, "%": true, "**": true, "<": true, ">": true, "<=": true, ">=": true, "==": true, "!=": true,
	"===": true, "!==": true, "<<": true, ">>": true, ">>>": true, "+=": true, "-=": true, "*=": true,
	"/=": true, "||=": true, "&&=": true, "??=": true,
	"else": true, "catch": true, "finally": true, "as": true, "satisfies": true, "extends": true,
	"implements": true, "in": true, "instanceof": true, "of": true, "from": true,
}

// stmtStart reports whether token i (at depth d, scope starting after lo)
// begins a statement: the first in its scope, after ";" or "}", or on a
// new line after a token that can end one, unless it can only continue.
func (s *jsOutliner) stmtStart(i int, lo int) bool {
	t := s.toks[i]
	if (t.kind == tPunct || t.kind == tIdent) && contLead[string(s.raw(i))] {
		return false
	}
	p := s.prev(i, t.depth, lo)
	if p < 0 {
		return true
	}
	pt := s.raw(p)
	switch s.toks[p].kind {
	case tPunct:
		switch string(pt) {
		case ";", "}":
			return true
		case ")", "]", "++", "--":
			return t.nl
		}
		return false
	case tIdent:
		return t.nl && !contTrail[string(pt)]
	}
	return t.nl
}

// stmtEnd returns the last token of the statement starting at i.
func (s *jsOutliner) stmtEnd(i int, lo int) int {
	last := i
	for k := s.next(i); k >= 0; k = s.next(k) {
		if s.punct(k, ";") {
			return k
		}
		if s.stmtStart(k, lo) {
			return last
		}
		last = k
	}
	return last
}

func (s *jsOutliner) endLine(i, lo int) int { return int(s.toks[s.stmtEnd(i, lo)].eol) }

// --- statements ---

func (s *jsOutliner) add(d Decl) {
	if len(s.o.Decls) == MaxDecls {
		s.o.Truncated = true
		return
	}
	d.Name = clip(d.Name)
	s.o.Decls = append(s.o.Decls, d)
}

func (s *jsOutliner) addImport(im Import) {
	if len(s.o.Imports) == MaxImports {
		s.o.Truncated = true
		return
	}
	im.Module = clip(im.Module)
	s.o.Imports = append(s.o.Imports, im)
}

// statement reads the top-level statement starting at i. Static imports
// and re-exports set s.skip past themselves.
func (s *jsOutliner) statement(i int) int {
	line := int(s.toks[i].line)
	j := i
	exported, def := false, false
	if s.ident(j, "export") {
		exported = true
		j = s.next(j)
		switch {
		case s.punct(j, "{"), s.punct(j, "*"), s.ident(j, "type") && s.punct(s.next(j), "{"):
			return s.reExport(i, j)
		case s.ident(j, "default"):
			def = true
			j = s.next(j)
		case s.punct(j, "="), s.ident(j, "as"), s.ident(j, "import"):
			return i + 1
		}
	}
	detail := ""
	for s.ident(j, "declare", "abstract", "async") && s.kind(s.next(j)) == tIdent {
		if s.ident(j, "async") {
			detail = "async"
		}
		j = s.next(j)
	}
	if j < 0 {
		return i + 1
	}
	decl := Decl{Line: line, Exported: exported, Default: def, Detail: detail}
	switch {
	case s.ident(j, "import") && !exported:
		return s.staticImport(i, j)
	case s.ident(j, "function"):
		k := s.next(j)
		if s.punct(k, "*") {
			k = s.next(k)
		}
		decl.Kind, decl.Name = "function", s.nameAt(k, def)
		if decl.Name == "" {
			return i + 1
		}
	case s.ident(j, "class"):
		decl.Kind, decl.Name = "class", s.nameAt(s.next(j), def)
		if s.ident(s.next(j), "extends", "implements") {
			decl.Name = s.nameAt(-1, def)
		}
		if decl.Name == "" {
			return i + 1
		}
		decl.EndLine = s.endLine(i, 0)
		s.add(decl)
		s.classBody(j, decl.Name)
		return i + 1
	case s.ident(j, "interface"):
		decl.Kind, decl.Name = "interface", s.nameAt(s.next(j), false)
	case s.ident(j, "type"):
		k := s.next(j)
		if !s.ident(k) || !(s.punct(s.next(k), "=") || s.punct(s.next(k), "<")) {
			return i + 1
		}
		decl.Kind, decl.Name = "type", s.text(k)
	case s.ident(j, "enum"):
		decl.Kind, decl.Name = "enum", s.nameAt(s.next(j), false)
	case s.ident(j, "namespace", "module") && (s.ident(s.next(j)) || s.kind(s.next(j)) == tString):
		k := s.next(j)
		name := s.text(k)
		if s.kind(k) == tString {
			name = unquote(name)
		}
		for s.punct(s.next(k), ".") && s.ident(s.next(s.next(k))) {
			k = s.next(s.next(k))
			name += "." + s.text(k)
		}
		decl.Kind, decl.Name = "namespace", name
	case s.ident(j, "const", "let", "var"):
		return s.variables(i, j, decl)
	case s.ident(j, "exports", "module"):
		s.commonJS(i, j)
		return i + 1
	case def:
		decl.Kind, decl.Name = "default", "default"
		if s.ident(j) && !s.punct(s.next(j), "(") && !s.punct(s.next(j), ".") {
			decl.Name = s.text(j)
		}
	default:
		return i + 1
	}
	if decl.Name == "" {
		return i + 1
	}
	decl.EndLine = s.endLine(i, 0)
	s.add(decl)
	return i + 1
}

// nameAt returns the declared name at k, "default" for an anonymous export
// default, or "".
func (s *jsOutliner) nameAt(k int, def bool) string {
	if s.ident(k) && !s.ident(k, "extends", "implements") {
		return s.text(k)
	}
	if def {
		return "default"
	}
	return ""
}

// staticImport records "import … from 'm'", "import 'm'" and TS
// "import x = require('m')"; import() and import.meta are left to the
// dynamic rule.
func (s *jsOutliner) staticImport(i, j int) int {
	k := s.next(j)
	if s.punct(k, "(") || s.punct(k, ".") {
		return i + 1
	}
	end := s.stmtEnd(i, 0)
	for m := j; m <= end && m < len(s.toks); m++ {
		if s.toks[m].kind == tString {
			s.addImport(Import{Line: int(s.toks[i].line), Module: unquote(s.text(m)), Kind: "import"})
			break
		}
	}
	s.skip = end + 1
	return end + 1
}

// reExport records "export … from 'm'"; a local "export { a, b as c }"
// marks a and b exported instead.
func (s *jsOutliner) reExport(i, j int) int {
	end := s.stmtEnd(i, 0)
	for m := j; m >= 0 && m <= end; m = s.next(m) {
		if s.ident(m, "from") && s.kind(s.next(m)) == tString {
			s.addImport(Import{Line: int(s.toks[i].line), Module: unquote(s.text(s.next(m))), Kind: "export"})
			s.skip = end + 1
			return end + 1
		}
	}
	if s.punct(j, "{") {
		if s.exportedNames == nil {
			s.exportedNames = make(map[string]bool)
		}
		close := s.next(j)
		for m := j + 1; m < len(s.toks) && (close < 0 || m < close); m++ {
			if s.ident(m) && !s.ident(m, "as", "type", "default") && !s.ident(m-1, "as") {
				s.exportedNames[s.text(m)] = true
			}
		}
	}
	s.skip = end + 1
	return end + 1
}

// variables records each declarator of a const/let/var statement;
// functions and arrow functions assigned to one are reported as functions.
func (s *jsOutliner) variables(i, j int, decl Decl) int {
	kind := s.text(j)
	k := s.next(j)
	if s.ident(k, "enum") {
		decl.Kind, decl.Name, decl.EndLine = "enum", s.nameAt(s.next(k), false), s.endLine(i, 0)
		if decl.Name != "" {
			s.add(decl)
		}
		return i + 1
	}
	end := s.stmtEnd(i, 0)
	decl.EndLine = int(s.toks[end].eol)
	for k >= 0 && k <= end {
		if !s.ident(k) {
			return i + 1 // destructuring: not outlined
		}
		d := decl
		d.Kind, d.Name, d.Line = kind, s.text(k), int(s.toks[k].line)
		if k == s.next(j) {
			d.Line = decl.Line
		}
		// Skip a type annotation up to "=", "," or the end.
		m := s.next(k)
		for m >= 0 && m <= end && !s.punct(m, "=") && !s.punct(m, ",") {
			m = s.next(m)
		}
		if s.punct(m, "=") {
			if fk, detail := s.functionValue(s.next(m)); fk != "" {
				d.Kind, d.Detail = fk, detail
			}
			for m >= 0 && m <= end && !s.punct(m, ",") {
				m = s.next(m)
			}
		}
		s.add(d)
		if !s.punct(m, ",") {
			break
		}
		k = s.next(m)
	}
	return i + 1
}

// functionValue classifies an initializer starting at v: a function
// expression or arrow function ("function"), a class expression ("class").
func (s *jsOutliner) functionValue(v int) (kind, detail string) {
	if s.ident(v, "async") {
		detail = "async"
		v = s.next(v)
	}
	switch {
	case s.ident(v, "function"):
		return "function", detail
	case s.ident(v, "class"):
		return "class", ""
	case s.ident(v) && s.punct(s.next(v), "=>"):
		return "function", "arrow"
	case s.punct(v, "<"): // generic arrow: <T>(x: T) => x
		for n := 0; v >= 0 && !s.punct(v, "(") && n < 64; n++ {
			v = s.next(v)
		}
		fallthrough
	case s.punct(v, "("):
		close := s.next(v)
		after := s.next(close)
		if s.punct(after, "=>") {
			return "function", "arrow"
		}
		if s.punct(after, ":") { // return type, then =>
			for n, m := 0, s.next(after); m >= 0 && n < 256; n, m = n+1, s.next(m) {
				if s.punct(m, "=>") {
					return "function", "arrow"
				}
				if s.punct(m, ";") || s.punct(m, ",") || s.punct(m, "=") {
					break
				}
			}
		}
	}
	return "", ""
}

// commonJS records "exports.x = …", "module.exports.x = …" and
// "module.exports = …".
func (s *jsOutliner) commonJS(i, j int) {
	k := j
	if s.ident(k, "module") {
		if !s.punct(s.next(k), ".") || !s.ident(s.next(s.next(k)), "exports") {
			return
		}
		k = s.next(s.next(k))
		if s.punct(s.next(k), "=") {
			s.add(Decl{Line: int(s.toks[i].line), EndLine: s.endLine(i, 0), Kind: "default", Name: "module.exports", Exported: true})
			return
		}
	}
	if s.punct(s.next(k), ".") && s.ident(s.next(s.next(k))) && s.punct(s.next(s.next(s.next(k))), "=") {
		name := s.next(s.next(k))
		d := Decl{Line: int(s.toks[i].line), EndLine: s.endLine(i, 0), Kind: "export", Name: s.text(name), Exported: true}
		if fk, detail := s.functionValue(s.next(s.next(name))); fk != "" {
			d.Kind, d.Detail = fk, detail
		}
		s.add(d)
	}
}

// memberMods are class member modifiers.
var memberMods = map[string]string{
	"static": "static", "public": "", "private": "", "protected": "", "readonly": "", "abstract": "",
	"override": "", "declare": "", "async": "async", "get": "getter", "set": "setter", "accessor": "",
}

// classBody records the methods of the class whose keyword is at j.
func (s *jsOutliner) classBody(j int, class string) {
	// The body is the first "{" at the class's depth whose previous token
	// can end a heritage clause (not "<", ",", ":" … of a type argument).
	open := -1
	for k, n := s.next(j), 0; k >= 0 && n < 512; k, n = s.next(k), n+1 {
		if s.punct(k, "{") {
			p := k - 1
			for p > j && s.toks[p].depth > s.toks[k].depth {
				p--
			}
			if s.ident(p) || s.punct(p, ">") || s.punct(p, ")") || s.punct(p, "]") || s.punct(p, "}") || p == j {
				open = k
				break
			}
		}
		if s.punct(k, ";") {
			return
		}
	}
	if open < 0 {
		return
	}
	d := s.toks[open].depth + 1
	for k := open + 1; k < len(s.toks); k++ {
		t := s.toks[k]
		if t.depth < d {
			return // the body's "}"
		}
		if t.depth != d || !s.stmtStart(k, open+1) {
			continue
		}
		s.member(k, open+1, class)
	}
}

// member records a method (or an arrow-function property) starting at k.
func (s *jsOutliner) member(k, lo int, class string) {
	start := k
	detail := ""
	for s.ident(k) {
		mod, ok := memberMods[string(s.raw(k))]
		n := s.next(k)
		if !ok || s.punct(n, "(") || s.punct(n, "<") || s.punct(n, "=") || s.punct(n, ";") ||
			s.punct(n, ":") || s.punct(n, "?") || s.punct(n, "!") || n < 0 {
			break
		}
		if mod != "" && detail == "" {
			detail = mod
		}
		k = n
	}
	if s.punct(k, "*") {
		k = s.next(k)
	}
	var name string
	switch s.kind(k) {
	case tIdent, tPrivate:
		name = s.text(k)
	case tString:
		name = unquote(s.text(k))
	default:
		return // computed names, index signatures, stray tokens
	}
	n := s.next(k)
	if s.punct(n, "?") || s.punct(n, "!") {
		n = s.next(n)
	}
	switch {
	case s.punct(n, "(") || s.punct(n, "<"):
	case s.punct(n, "="):
		fk, d := s.functionValue(s.next(n))
		if fk != "function" {
			return
		}
		if detail == "" {
			detail = d
		}
	default:
		return
	}
	s.add(Decl{Line: int(s.toks[start].line), EndLine: s.endLine(start, lo), Kind: "method", Name: name,
		Parent: class, Detail: detail})
}

// dynamicImport records require('m') and import('m') with a literal
// module, anywhere in the file.
func (s *jsOutliner) dynamicImport(i int) {
	if !s.ident(i, "require", "import") || i+3 >= len(s.toks) || !s.punct(i+1, "(") || !s.punct(i+3, ")") {
		return
	}
	if s.punct(i-1, ".") || s.punct(i-1, "?.") || s.ident(i-1, "function") {
		return
	}
	s.dynamicModule(int(s.toks[i].line), s.ident(i, "import"), s.toks[i+2])
}

// dynamicModule records the require() (or, with dyn, import()) on line
// whose argument is token m, when that is a literal module name.
func (s *jsOutliner) dynamicModule(line int, dyn bool, m tok) {
	var mod string
	switch m.kind {
	case tString:
		mod = unquote(string(s.src[m.start:m.end]))
	case tTemplate:
		t := string(s.src[m.start:m.end])
		if strings.Contains(t, "${") || len(t) < 2 {
			return
		}
		mod = t[1 : len(t)-1]
	default:
		return
	}
	kind := "require"
	if dyn {
		kind = "dynamic"
	}
	s.addImport(Import{Line: line, Module: mod, Kind: kind})
}

// unquote decodes a JS string literal's common escapes; anything it does
// not know is kept as written.
func unquote(lit string) string {
	if len(lit) < 2 {
		return lit
	}
	body := lit[1:]
	if q := lit[0]; body[len(body)-1] == q {
		body = body[:len(body)-1]
	}
	if !strings.Contains(body, `\`) {
		return body
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' || i+1 == len(body) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := body[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case 'x':
			if i+2 < len(body) {
				if v, err := strconv.ParseUint(body[i+1:i+3], 16, 8); err == nil {
					b.WriteRune(rune(v))
					i += 2
					continue
				}
			}
			b.WriteByte(e)
		case 'u':
			hex, n := "", 0
			if i+1 < len(body) && body[i+1] == '{' {
				if end := strings.IndexByte(body[i:], '}'); end > 0 {
					hex, n = body[i+2:i+end], end
				}
			} else if i+4 < len(body) {
				hex, n = body[i+1:i+5], 4
			}
			if v, err := strconv.ParseUint(hex, 16, 32); err == nil && n > 0 && utf8.ValidRune(rune(v)) {
				b.WriteRune(rune(v))
				i += n
				continue
			}
			b.WriteByte(e)
		case '\n':
		default:
			b.WriteByte(e)
		}
	}
	return b.String()
}
