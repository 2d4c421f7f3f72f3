package filechange

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// PatchError is a patch the parser refused: Code is CodePatchInvalid or
// CodePatchTooLarge, Line the 1-based line of the patch text at fault (0
// for the patch as a whole).
type PatchError struct {
	Code string
	Line int
	Msg  string
}

func (e *PatchError) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// maxContexts bounds the stacked "@@" headers of one hunk.
const maxContexts = 8

// ParsePatch parses an apply_patch text under DefaultLimits. It only
// parses: whether the hunks apply is decided against the files by
// ApplyPatch. Errors are *PatchError.
//
// The grammar is the one Codex / OpenAI's apply_patch tool uses:
//
//	*** Begin Patch
//	*** Add File: <path>         then its lines, each "+<text>"
//	*** Delete File: <path>      no body
//	*** Update File: <path>
//	*** Move to: <path>          optional, directly after Update File
//	@@ [<context line>]          a hunk (the first may omit its @@)
//	 <context> / -<removed> / +<added>
//	*** End of File              optional, ends a hunk anchored at EOF
//	*** End Patch
//
// with these precise rules:
//   - Markers (Begin/End Patch, the section headers, Move to, End of File)
//     are recognised with surrounding whitespace trimmed, a trailing "\r"
//     included, so a CRLF patch parses. Paths are trimmed. Blank lines
//     around the patch and between sections are ignored; a heredoc wrapper
//     (<<EOF, <<'EOF' or <<"EOF" ... EOF) is unwrapped.
//   - "*** End Patch" is required: a patch cut short in transit is refused,
//     never half applied. Nothing but blank lines may follow it.
//   - Add File lines are copied byte for byte after their "+" (a trailing
//     "\r" stays, so a CRLF patch adds a CRLF file), each ending in "\n";
//     "\ No newline at end of file" after the last one drops that final
//     newline. No lines at all adds an empty file. Any other line before
//     the next header is an error (an empty line is written "+").
//   - In an Update section the first byte decides (so " *** End Patch" is a
//     context line, not the marker): ' ', '-', '+' make a
//     hunk line whose text is the rest with trailing "\r"s removed; "@@"
//     opens a hunk ("@@ text" gives it a context line; consecutive headers
//     stack, each narrowing the next; a unified "@@ -1,2 +1,3 @@ text"
//     range is ignored and only its trailing text kept); a line starting
//     with "*" is a marker; "\" is "\ No newline at end of file" (after a
//     '-' line it speaks of the old file and is ignored; after a ' ' or
//     '+' line the new file ends without a newline, and the hunk must end
//     there). A completely empty line inside a hunk is an empty context
//     line, but empty lines before a section's first hunk line or directly
//     before an "@@" or the next section are separators. Anything else is an error with its line number.
//   - An Update needs at least one hunk, unless it has a Move to (a pure
//     rename). A hunk needs at least one line.
func ParsePatch(text string) (*Patch, error) { return parsePatch(text, DefaultLimits) }

func parsePatch(text string, lim Limits) (*Patch, error) {
	lim = lim.withDefaults()
	if len(text) > lim.MaxPatchBytes {
		return nil, &PatchError{Code: CodePatchTooLarge, Msg: fmt.Sprintf("the patch is %d bytes; at most %s are accepted", len(text), sizeText(int64(lim.MaxPatchBytes)))}
	}
	if n := strings.Count(text, "\n"); n > lim.MaxPatchLines {
		return nil, &PatchError{Code: CodePatchTooLarge, Msg: fmt.Sprintf("the patch has %d lines; at most %d are accepted", n, lim.MaxPatchLines)}
	}
	lines := strings.Split(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	p := &parser{lines: lines, lim: lim}
	return p.parse()
}

type parser struct {
	lines  []string
	i, end int // the current line and the end of the patch body (indexes)
	lim    Limits
	hunks  int
	out    Patch
}

func (p *parser) fail(i int, format string, args ...any) error {
	return &PatchError{Code: CodePatchInvalid, Line: i + 1, Msg: fmt.Sprintf(format, args...)}
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

// bare is an empty line (a CRLF patch's is "\r").
func bare(s string) bool { return strings.TrimRight(s, "\r") == "" }

// quote shows a line of the patch in an error, bounded.
func quote(s string) string {
	if len(s) > 60 {
		cut := 60
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return fmt.Sprintf("%q", s)
}

func (p *parser) parse() (*Patch, error) {
	lo, hi := 0, len(p.lines)
	trimBlank := func() {
		for lo < hi && blank(p.lines[lo]) {
			lo++
		}
		for hi > lo && blank(p.lines[hi-1]) {
			hi--
		}
	}
	trimBlank()
	if hi-lo >= 2 {
		switch strings.TrimSpace(p.lines[lo]) {
		case "<<EOF", "<<'EOF'", `<<"EOF"`:
			if strings.TrimSpace(p.lines[hi-1]) == "EOF" {
				lo, hi = lo+1, hi-1
				trimBlank()
			}
		}
	}
	if lo == hi {
		return nil, &PatchError{Code: CodePatchInvalid, Msg: "the patch is empty: it starts with " + markBegin + " and ends with " + markEnd}
	}
	if strings.TrimSpace(p.lines[lo]) != markBegin {
		return nil, p.fail(lo, "the first line must be %s, got %s", markBegin, quote(p.lines[lo]))
	}
	p.i, p.end = lo+1, hi
	for {
		for p.i < p.end && blank(p.lines[p.i]) {
			p.i++
		}
		if p.i >= p.end {
			return nil, p.fail(hi-1, "the patch ends without %s (was it cut short?)", markEnd)
		}
		if len(p.out.Files) >= p.lim.MaxPatchFiles {
			return nil, &PatchError{Code: CodePatchTooLarge, Line: p.i + 1, Msg: fmt.Sprintf("more than %d file sections", p.lim.MaxPatchFiles)}
		}
		l := strings.TrimSpace(p.lines[p.i])
		var err error
		switch {
		case l == markEnd:
			if p.i+1 < p.end {
				return nil, p.fail(p.i+1, "nothing may follow %s", markEnd)
			}
			return &p.out, nil
		case strings.HasPrefix(l, markAdd):
			err = p.parseAdd(l)
		case strings.HasPrefix(l, markDelete):
			err = p.parseDelete(l)
		case strings.HasPrefix(l, markUpdate):
			err = p.parseUpdate(l)
		case strings.HasPrefix(l, markMove):
			err = p.fail(p.i, "%s must directly follow its %s line", markMove, markUpdate)
		case l == markEOF || strings.HasPrefix(l, "@@") || strings.HasPrefix(p.lines[p.i], "-") || strings.HasPrefix(p.lines[p.i], "+") || strings.HasPrefix(p.lines[p.i], " "):
			err = p.fail(p.i, "hunk lines belong to an %s section", markUpdate)
		default:
			err = p.fail(p.i, "expected %s, %s, %s or %s, got %s", markAdd, markUpdate, markDelete, markEnd, quote(p.lines[p.i]))
		}
		if err != nil {
			return nil, err
		}
	}
}

// headerPath is the trimmed path after a section marker.
func (p *parser) headerPath(l, mark string) (string, error) {
	path := strings.TrimSpace(l[len(mark):])
	if path == "" {
		return "", p.fail(p.i, "%s needs a path", mark)
	}
	return path, nil
}

// sectionEnds reports whether line i starts the next section or ends the
// patch.
func (p *parser) sectionEnds(i int) bool {
	return i >= p.end || strings.HasPrefix(strings.TrimSpace(p.lines[i]), "*** ")
}

// skipBlank returns the index of the first non-blank line from i.
func (p *parser) skipBlank(i int) int {
	for i < p.end && blank(p.lines[i]) {
		i++
	}
	return i
}

func (p *parser) parseAdd(l string) error {
	path, err := p.headerPath(l, markAdd)
	if err != nil {
		return err
	}
	f := FilePatch{Op: OpAdd, Path: path, Line: p.i + 1}
	var b strings.Builder
	n, noNL := 0, false
	for p.i++; p.i < p.end; p.i++ {
		raw := p.lines[p.i]
		switch {
		case strings.HasPrefix(raw, "+"):
			if noNL {
				return p.fail(p.i, "no line may follow %s", markNoNewline)
			}
			b.WriteString(raw[1:])
			b.WriteByte('\n')
			n++
			continue
		case strings.TrimSpace(raw) == markNoNewline:
			if n == 0 || noNL {
				return p.fail(p.i, "%s must follow the last + line", markNoNewline)
			}
			noNL = true
			continue
		case blank(raw):
			if j := p.skipBlank(p.i); p.sectionEnds(j) {
				p.i = j
				break
			}
			return p.fail(p.i, "every line of an %s section starts with + (write an empty line as a lone +)", markAdd)
		case p.sectionEnds(p.i):
		default:
			return p.fail(p.i, "every line of an %s section starts with +, got %s", markAdd, quote(raw))
		}
		break
	}
	f.Content = b.String()
	if noNL {
		f.Content = f.Content[:len(f.Content)-1]
	}
	p.out.Files = append(p.out.Files, f)
	return nil
}

func (p *parser) parseDelete(l string) error {
	path, err := p.headerPath(l, markDelete)
	if err != nil {
		return err
	}
	p.out.Files = append(p.out.Files, FilePatch{Op: OpDelete, Path: path, Line: p.i + 1})
	p.i++
	if j := p.skipBlank(p.i); !p.sectionEnds(j) {
		return p.fail(j, "a %s section has no lines; got %s", markDelete, quote(p.lines[j]))
	}
	return nil
}

func (p *parser) parseUpdate(l string) error {
	path, err := p.headerPath(l, markUpdate)
	if err != nil {
		return err
	}
	f := FilePatch{Op: OpUpdate, Path: path, Line: p.i + 1}
	p.i++
	if p.i < p.end {
		if m := strings.TrimSpace(p.lines[p.i]); strings.HasPrefix(m, markMove) {
			if f.MoveTo, err = p.headerPath(m, markMove); err != nil {
				return err
			}
			p.i++
		}
	}
	var cur *Hunk
	closed := false // cur ended with End of File or a no-newline marker
	finish := func() error {
		if cur == nil {
			return nil
		}
		if len(cur.Lines) == 0 {
			return p.fail(cur.Line-1, "the hunk has no lines")
		}
		f.Hunks = append(f.Hunks, *cur)
		cur, closed = nil, false
		return nil
	}
	open := func() error {
		if p.hunks++; p.hunks > p.lim.MaxPatchHunks {
			return &PatchError{Code: CodePatchTooLarge, Line: p.i + 1, Msg: fmt.Sprintf("more than %d hunks", p.lim.MaxPatchHunks)}
		}
		cur = &Hunk{Line: p.i + 1}
		return nil
	}
	add := func(kind byte, text string) error {
		if closed {
			return p.fail(p.i, "no hunk line may follow %s or %s; start a new hunk with @@", markEOF, markNoNewline)
		}
		if cur == nil {
			if err := open(); err != nil {
				return err
			}
		}
		cur.Lines = append(cur.Lines, string(kind)+strings.TrimRight(text, "\r"))
		return nil
	}
loop:
	for ; p.i < p.end; p.i++ {
		raw := p.lines[p.i]
		if bare(raw) {
			j := p.i
			for j < p.end && bare(p.lines[j]) {
				j++
			}
			if cur == nil || j == p.end || strings.HasPrefix(p.lines[j], "@") ||
				(strings.HasPrefix(p.lines[j], "*") && strings.TrimSpace(p.lines[j]) != markEOF) {
				p.i = j - 1 // separators
				continue
			}
			for ; p.i < j; p.i++ { // empty context lines
				if err := add(' ', ""); err != nil {
					return err
				}
			}
			p.i--
			continue
		}
		switch c := raw[0]; c {
		case ' ', '-', '+':
			if err := add(c, raw[1:]); err != nil {
				return err
			}
		case '@':
			h := strings.TrimSpace(raw)
			ctx, ok := hunkHeader(h)
			if !ok {
				return p.fail(p.i, "a hunk header is @@ or @@ followed by a space and a line of context, got %s", quote(raw))
			}
			if cur == nil || len(cur.Lines) > 0 {
				if err := finish(); err != nil {
					return err
				}
				if err := open(); err != nil {
					return err
				}
			}
			if ctx != "" {
				if len(cur.Context) == maxContexts {
					return p.fail(p.i, "more than %d stacked @@ headers", maxContexts)
				}
				cur.Context = append(cur.Context, ctx)
			}
		case '\\':
			if strings.TrimSpace(raw) != markNoNewline {
				return p.fail(p.i, "unknown marker %s (did you mean %s?)", quote(raw), markNoNewline)
			}
			if cur == nil || len(cur.Lines) == 0 || closed {
				return p.fail(p.i, "%s must follow a hunk line", markNoNewline)
			}
			if last := cur.Lines[len(cur.Lines)-1]; last[0] != '-' {
				cur.NoNewlineAtEnd, closed = true, true
			}
		case '*':
			m := strings.TrimSpace(raw)
			switch {
			case m == markEOF:
				if cur == nil || len(cur.Lines) == 0 || cur.EndOfFile {
					return p.fail(p.i, "%s must end a hunk", markEOF)
				}
				cur.EndOfFile, closed = true, true
			case strings.HasPrefix(m, markMove):
				return p.fail(p.i, "%s must directly follow its %s line", markMove, markUpdate)
			case strings.HasPrefix(m, "*** "):
				break loop
			default:
				return p.fail(p.i, "hunk lines start with ' ' (context), '-' (remove) or '+' (add), got %s", quote(raw))
			}
		default:
			return p.fail(p.i, "hunk lines start with ' ' (context), '-' (remove) or '+' (add), got %s", quote(raw))
		}
	}
	if err := finish(); err != nil {
		return err
	}
	if len(f.Hunks) == 0 && f.MoveTo == "" {
		return p.fail(f.Line-1, "%s %s has no hunks (start one with @@)", markUpdate, f.Path)
	}
	p.out.Files = append(p.out.Files, f)
	return nil
}

// hunkHeader reads "@@" or "@@ <context>" (trimmed). A unified-diff range
// ("@@ -12,3 +12,4 @@ func f") is ignored: the numbers are not trusted,
// the text after it is the context.
func hunkHeader(h string) (string, bool) {
	if h == "@@" {
		return "", true
	}
	ctx, ok := strings.CutPrefix(h, "@@ ")
	if !ok {
		return "", false
	}
	for {
		rest, ok := cutRange(ctx)
		if !ok {
			return ctx, true
		}
		ctx = rest
	}
}

// cutRange removes a leading "-a[,b] +c[,d] @@" and the space after it.
func cutRange(s string) (string, bool) {
	num := func(s string, sign byte) (string, bool) {
		if s == "" || s[0] != sign {
			return s, false
		}
		i := 1
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 1 {
			return s, false
		}
		if i < len(s) && s[i] == ',' {
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j == i+1 {
				return s, false
			}
			i = j
		}
		return s[i:], true
	}
	r, ok := num(s, '-')
	if !ok || !strings.HasPrefix(r, " ") {
		return s, false
	}
	if r, ok = num(r[1:], '+'); !ok {
		return s, false
	}
	switch {
	case r == " @@":
		return "", true
	case strings.HasPrefix(r, " @@ "):
		return r[4:], true
	}
	return s, false
}
