package outline

import "math"

// maxStmtTokens bounds the tokens the streaming scan keeps for one
// top-level statement (about 450 KiB). A statement longer than that (a
// minified bundle's one wrapper, a table of thousands of entries) is
// outlined from its first maxStmtTokens tokens and the outline says
// Truncated.
const maxStmtTokens = 1 << 14

// jsStreamer is the scan of a JS/TS source larger than MaxParseBytes. It
// runs the same statement rules as the full outline, one top-level
// statement at a time, on the tokens that statement needs: those at
// bracket depth 0 (the statement), and at depth 1 in a class body or an
// export list (members, exported names). Other tokens are only looked at
// in passing, for require() and import() — so memory does not grow with
// the file, only with one statement, and that is bounded too.
type jsStreamer struct {
	s *jsOutliner

	// The statement being read: its tokens at depth 0, and deeper ones
	// down to depth inner once they can matter (at most maxStmtTokens:
	// capped says more were dropped), and its last token at depth 0 up to
	// its first ";" (where its end line comes from).
	in     bool
	inner  int32
	buf    []tok
	capped bool
	end    tok
	semi   bool

	// prevTop is the latest token at depth 0, which decides whether the
	// next one starts a statement.
	prevTop tok
	hasTop  bool

	// recent are the last four tokens at any depth (count of them in n),
	// oldest first: a require( or import( with a literal module is
	// recognised on its ")". pending are those of the current statement:
	// a static import or re-export drops them, as the full outline skips
	// its tokens.
	recent  [4]tok
	n       int
	pending []dynImport
	over    bool // more than could ever be recorded
}

// dynImport is a require() or import() call with a literal module:
// where it is, and its module token.
type dynImport struct {
	line   int32
	dyn    bool // import(), not require()
	module tok
}

// jsScan outlines src (already bounded by MaxSourceBytes) into o with one
// streaming pass.
func jsScan(src []byte, opt Options, o *Outline) {
	st := &jsStreamer{s: &jsOutliner{src: src, o: o}}
	if stream(src, opt, st.token) {
		o.Truncated = true
	}
	st.finish()
	st.s.markExported()
	o.Scanned = true
}

func (st *jsStreamer) token(t tok) {
	st.dynamic(t)
	if t.depth == 0 {
		if st.startsStatement(t) {
			st.finish()
			st.in = true
		}
		if st.in && !st.semi {
			st.end = t
			st.semi = st.isPunct(t, ";")
		}
		if st.in && st.inner == 0 {
			st.inner = st.innerDepth(t)
		}
		st.prevTop, st.hasTop = t, true
	}
	if st.in && t.depth <= st.inner {
		switch {
		case len(st.buf) == maxStmtTokens:
			st.capped = true
		case len(st.buf) == cap(st.buf):
			// Doubling, to the bound: append's gentler growth past a
			// few hundred entries would allocate five times the final
			// buffer on the way.
			grown := make([]tok, len(st.buf), min(max(2*cap(st.buf), 256), maxStmtTokens))
			copy(grown, st.buf)
			st.buf = append(grown, t)
		default:
			st.buf = append(st.buf, t)
		}
	}
}

// innerDepth says how deep the statement's tokens from t on (at depth 0)
// are kept: a static import looks at every token for its module; a class
// body's members and an export list's names are one level in (from a
// class keyword, or a "{" right after export or export type); anything
// else needs depth 0 only.
func (st *jsStreamer) innerDepth(t tok) int32 {
	switch {
	case len(st.buf) == 1 && st.isIdent(st.buf[0], "import") && !st.isPunct(t, "(") && !st.isPunct(t, "."):
		return math.MaxInt32 // every depth (not import() or import.meta)
	case st.isIdent(t, "class"):
		return 1
	case st.isPunct(t, "{") && len(st.buf) > 0 && len(st.buf) <= 2 && st.isIdent(st.buf[0], "export") &&
		(len(st.buf) == 1 || st.isIdent(st.buf[1], "type")):
		return 1
	}
	return 0
}

// startsStatement is stmtStart for a token at depth 0, against the
// previous token at depth 0 in the whole file.
func (st *jsStreamer) startsStatement(t tok) bool {
	src := st.s.src
	if (t.kind == tPunct || t.kind == tIdent) && contLead[string(src[t.start:t.end])] {
		return false
	}
	if !st.hasTop {
		return true
	}
	p := st.prevTop
	pt := src[p.start:p.end]
	switch p.kind {
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

func (st *jsStreamer) isPunct(t tok, p string) bool {
	return t.kind == tPunct && string(st.s.src[t.start:t.end]) == p
}

func (st *jsStreamer) isIdent(t tok, w string) bool {
	return t.kind == tIdent && string(st.s.src[t.start:t.end]) == w
}

// dynamic is dynamicImport on the window ending at t: recent holds the
// four tokens before it. t then joins the window.
func (st *jsStreamer) dynamic(t tok) {
	if st.n >= 3 && st.isPunct(t, ")") {
		st.dynamicAt(t)
	}
	copy(st.recent[:], st.recent[1:])
	st.recent[3] = t
	st.n++
}

func (st *jsStreamer) dynamicAt(t tok) {
	call, open, mod := st.recent[1], st.recent[2], st.recent[3]
	dyn := st.isIdent(call, "import")
	if !dyn && !st.isIdent(call, "require") || !st.isPunct(open, "(") || (mod.kind != tString && mod.kind != tTemplate) {
		return
	}
	if prev := st.recent[0]; st.n >= 4 && (st.isPunct(prev, ".") || st.isPunct(prev, "?.") || st.isIdent(prev, "function")) {
		return
	}
	if len(st.pending) > MaxImports {
		st.over = true
		return
	}
	st.pending = append(st.pending, dynImport{line: call.line, dyn: dyn, module: mod})
}

// finish outlines the statement read so far, then records its dynamic
// imports unless it was a static import or re-export.
func (st *jsStreamer) finish() {
	s := st.s
	skipped := false
	if st.in && len(st.buf) > 0 {
		s.toks, s.skip = st.buf, 0
		before := len(s.o.Decls)
		s.statement(0)
		skipped = s.skip > 0
		if st.capped {
			// Its declarations end where the statement does, not where
			// the kept tokens stop.
			s.o.Truncated = true
			for i := before; i < len(s.o.Decls); i++ {
				if d := &s.o.Decls[i]; d.Parent == "" {
					d.EndLine = int(st.end.eol)
				}
			}
		}
	}
	if !skipped {
		if st.over {
			s.o.Truncated = true
		}
		for _, d := range st.pending {
			s.dynamicModule(int(d.line), d.dyn, d.module)
		}
	}
	st.in, st.inner, st.capped, st.semi = false, 0, false, false
	st.buf, st.pending, st.over = st.buf[:0], st.pending[:0], false
	s.toks = nil
}
