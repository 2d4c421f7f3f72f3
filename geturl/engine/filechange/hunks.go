package filechange

import (
	"fmt"
	"strings"
)

// hunkError is a hunk that does not apply to the file it targets.
type hunkError struct {
	hunk    int // 0-based index in the section
	line    int // the hunk's line in the patch text
	reason  string
	want    string // the lines that were not found, for the agent to compare
	tooMuch bool   // the matching budget ran out
}

func (h *hunkError) Error() string { return h.reason }

// applyHunks applies an update's hunks to content, all in memory.
//
// Hunks apply in order, each strictly below the previous one: a hunk's @@
// context lines are found one after the other (each below the last), then
// its old lines (context and removed) are found below those, at the first
// position where they match (see level for the matching passes; with
// "*** End of File" only as the file's last lines). A hunk with no old
// lines inserts its added lines directly below its last @@ context line,
// or at the end of the file when it has none.
//
// Bytes: context lines keep the file's own text and terminator; removed
// lines go; added lines get the file's dominant line terminator (CRLF in a
// CRLF file). Whether the file ends with a newline is a property of the
// file, kept whatever the hunks do to its last lines (replaced, deleted or
// appended to), so the answer never depends on how much context a hunk
// quotes; only "\ No newline at end of file" after the last new line of a
// hunk that reaches the end of the file changes it, to no final newline.
func applyHunks(m *matcher, content string, hunks []Hunk) (string, []HunkResult, error) {
	file := splitLines(content)
	m.reset(file)
	eol := dominantEOL(file)
	noFinalNewline := len(file) > 0 && file[len(file)-1].eol == ""
	type repl struct {
		at, n int
		h     *Hunk
	}
	reps := make([]repl, 0, len(hunks))
	results := make([]HunkResult, len(hunks))
	cursor, added := 0, 0
	for i := range hunks {
		h := &hunks[i]
		fail := func(want, format string, args ...any) error {
			return &hunkError{hunk: i, line: h.Line, want: want, reason: fmt.Sprintf(format, args...)}
		}
		for _, c := range h.Context {
			at, _, err := m.seek([]string{c}, cursor, false, levelUnicode)
			if err != nil {
				return "", nil, &hunkError{hunk: i, line: h.Line, reason: "matching this patch takes too much work", tooMuch: true}
			}
			if at < 0 {
				if before, _, _ := m.seek([]string{c}, 0, false, levelUnicode); before >= 0 && before < cursor {
					return "", nil, fail(c, "@@ context %s occurs only above the previous hunk (line %d): hunks must be in file order", quote(c), before+1)
				}
				return "", nil, fail(c, "@@ context %s does not occur %s", quote(c), below(cursor))
			}
			cursor = at + 1
		}
		old := h.Old()
		at, lvl := len(file), levelExact
		switch {
		case len(old) == 0 && len(h.Context) > 0 && !h.EndOfFile:
			at = cursor
		case len(old) > 0:
			var err error
			at, lvl, err = m.seek(old, cursor, h.EndOfFile, levelUnicode)
			if err != nil {
				return "", nil, &hunkError{hunk: i, line: h.Line, reason: "matching this patch takes too much work", tooMuch: true}
			}
			if at < 0 {
				return "", nil, fail(expected(old), "%s", m.explain(old, cursor, h.EndOfFile))
			}
		}
		if h.NoNewlineAtEnd && (i != len(hunks)-1 || at+len(old) != len(file)) {
			return "", nil, fail("", "%s is only valid on the last hunk, ending at the end of the file", markNoNewline)
		}
		reps = append(reps, repl{at: at, n: len(old), h: h})
		r := HunkResult{Line: at + 1, Match: lvl.String()}
		for _, l := range h.Lines {
			switch l[0] {
			case '-':
				r.Removed++
			case '+':
				r.Added++
			}
		}
		added += r.Added
		results[i] = r
		cursor = at + len(old)
	}
	out := make([]line, 0, len(file)+added)
	prev := 0
	for _, r := range reps {
		out = append(out, file[prev:r.at]...)
		k := r.at
		for _, l := range r.h.Lines {
			switch l[0] {
			case ' ':
				out = append(out, file[k])
				k++
			case '-':
				k++
			case '+':
				out = append(out, line{text: l[1:], eol: eol})
			}
		}
		prev = k
	}
	out = append(out, file[prev:]...)
	for i := 0; i < len(out)-1; i++ {
		if out[i].eol == "" { // a former last line that now has lines below it
			out[i].eol = eol
		}
	}
	if n := len(out); n > 0 && (noFinalNewline || (len(hunks) > 0 && hunks[len(hunks)-1].NoNewlineAtEnd)) {
		out[n-1].eol = ""
	}
	return joinLines(out), results, nil
}

// explain says why old lines were not found where a hunk wanted them.
func (m *matcher) explain(old []string, cursor int, eof bool) string {
	first := quote(old[0])
	if eof {
		if at, _, _ := m.seek(old, cursor, false, levelUnicode); at >= 0 {
			return fmt.Sprintf("the hunk's lines (starting %s) occur at line %d, not at the end of the file as *** End of File demands", first, at+1)
		}
	}
	if at, _, _ := m.seek(old, 0, false, levelUnicode); at >= 0 && at < cursor {
		return fmt.Sprintf("the hunk's lines (starting %s) occur only above the previous hunk, at line %d: hunks must be in file order", first, at+1)
	}
	if len(old) > 1 {
		return fmt.Sprintf("the hunk's %d context and removed lines (starting %s) do not occur together %s", len(old), first, below(cursor))
	}
	return fmt.Sprintf("the line %s does not occur %s", first, below(cursor))
}

// below says where a search started: the whole file, or below the line
// the previous hunk or context ended on.
func below(cursor int) string {
	if cursor == 0 {
		return "in the file"
	}
	return fmt.Sprintf("below line %d", cursor)
}

// expected is a short excerpt of a hunk's old lines for an error.
func expected(old []string) string {
	if len(old) > 3 {
		old = append(old[:3:3], "…")
	}
	return strings.Join(old, "\n")
}
