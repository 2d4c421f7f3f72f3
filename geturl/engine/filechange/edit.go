package filechange

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/fault"
)

// maxCounted bounds how many occurrences of an ambiguous old text are
// counted, and maxListed how many of their line numbers are reported.
const (
	maxCounted = 10_000
	maxListed  = 10
)

// Edit is /e: it replaces the one occurrence of old in the existing file at
// p with new. old must be non-empty and differ from new; it must occur
// exactly once, byte for byte (occurrences are counted overlapping, so
// "aa" in "aaa" is ambiguous). Not found and ambiguous are structured
// refusals (the latter with the count and the first line numbers).
//
// Line endings: in a file whose line breaks are all CRLF, an old that does
// not occur as given but contains bare LFs is tried once more with CRLFs
// (agents naturally send ~n), and the bare LFs of new become CRLF, so an
// edit never mixes line endings into a CRLF file (LineEndings "crlf" in the
// result says so). In any other file old and new are used byte for byte.
// The file keeps its permission bits; the write is atomic.
func (e *Engine) Edit(ctx context.Context, p, old, new string) (*EditResult, error) {
	lim := e.Limits.withDefaults()
	switch {
	case old == "":
		return nil, refusal(CodeEditOldEmpty, "old text is empty",
			"old must quote the exact text to replace; to insert, include a neighbouring line in both old and new; to create a file use /w", fault.ActionCorrectRequest, true)
	case old == new:
		return nil, refusal(CodeEditNoChange, "old and new are identical", "nothing to change", "", false)
	}
	f, done, terr := e.begin(ctx)
	if terr != nil {
		return nil, terr
	}
	defer done()
	t, terr := e.resolve(p)
	if terr != nil {
		return nil, terr
	}
	if !t.exists {
		return nil, refusal("path_not_found", "path does not exist: "+t.virtual, "check the spelling (/f finds files by name); to create a file use /w", fault.ActionCorrectRequest, true).With("path", t.virtual)
	}
	d := f.dir(path.Dir(t.rel))
	defer d.close()
	name := path.Base(t.rel)
	data, fi, err := d.readRegular(name, lim.MaxFileBytes)
	if err != nil {
		return nil, fileFailure(t.virtual, "read", err, lim.MaxFileBytes)
	}
	s := string(data)
	fp := files.Fingerprint(data)
	crlf := allCRLF(s)
	endings := ""
	at, n, lines := occurrences(s, old)
	if n == 0 && crlf {
		if o := toCRLF(old); o != old {
			if at, n, lines = occurrences(s, o); n > 0 {
				old, endings = o, "crlf"
			}
		}
	}
	switch {
	case n == 0:
		return nil, notFound(t.virtual, fp, s, old)
	case n > 1:
		count := fmt.Sprint(n)
		if n >= maxCounted {
			count = "at least " + count
		}
		listed := joinInts(lines)
		if n > len(lines) {
			listed += ", …"
		}
		return nil, refusal(CodeEditOldAmbiguous, fmt.Sprintf("old text occurs %s times in %s (lines %s)", count, t.virtual, listed),
			"extend old with neighbouring lines until it occurs exactly once, or change every place with one /a patch", fault.ActionCorrectRequest, true).
			With("path", t.virtual).With("occurrences", n).With("lines", lines)
	}
	if crlf {
		if nw := toCRLF(new); nw != new {
			new, endings = nw, "crlf"
		}
		if new == old {
			return nil, refusal(CodeEditNoChange, "old and new are identical once the file's CRLF line endings are applied", "nothing to change", "", false).With("path", t.virtual)
		}
	}
	out := s[:at] + new + s[at+len(old):]
	if int64(len(out)) > lim.MaxFileBytes {
		return nil, refusal(CodeContentTooLarge, fmt.Sprintf("the edited file would be larger than %s", sizeText(lim.MaxFileBytes)), "", "", false).With("path", t.virtual)
	}
	if err := d.replace(name, []byte(out), fi.Mode().Perm(), true); err != nil {
		return nil, ioFailure(t.virtual, "write", err)
	}
	d.sync()
	e.invalidate(t.host)
	res := &EditResult{
		Path:                t.virtual,
		Line:                lineOf(s, at),
		BytesWritten:        len(out),
		Fingerprint:         files.Fingerprint([]byte(out)),
		PreviousFingerprint: fp,
		LineEndings:         endings,
	}
	if e.Edits.Note(t.host + "\x00" + old + "\x00" + new) {
		res.SuggestedBulkPatch, res.EfficiencyHint = true, EfficiencyHint
	}
	return res, nil
}

// occurrences finds old in s, overlapping occurrences included: the offset
// of the first, how many there are (counting stops at maxCounted), and the
// line numbers of the first maxListed.
func occurrences(s, old string) (first, n int, lines []int) {
	first = strings.Index(s, old)
	if first < 0 {
		return -1, 0, nil
	}
	line, lineAt := 1, 0
	for at := first; at >= 0 && n < maxCounted; {
		n++
		if len(lines) < maxListed {
			line += strings.Count(s[lineAt:at], "\n")
			lineAt = at
			lines = append(lines, line)
		}
		next := strings.Index(s[at+1:], old)
		if next < 0 {
			break
		}
		at += 1 + next
	}
	return first, n, lines
}

// notFound explains a missing old text as precisely as it cheaply can: a
// line-ending mismatch, or a match that differs only in whitespace at line
// ends.
func notFound(virtual, fp, s, old string) *fault.Error {
	detail := "old text does not occur in " + virtual
	hint := "read the file again and copy old exactly: it must match byte for byte, indentation and line breaks included"
	switch {
	case strings.Contains(old, "\r\n") && !strings.Contains(s, "\r\n") && strings.Contains(s, strings.ReplaceAll(old, "\r\n", "\n")):
		detail += "; it would with LF line breaks"
		hint = "the file uses LF line endings: send old (and new) with ~n line breaks only"
	default:
		if l, ok := looseFind(splitLines(s), strings.Split(strings.ReplaceAll(old, "\r\n", "\n"), "\n")); ok {
			detail += fmt.Sprintf("; ignoring whitespace at line ends it matches at line %d", l)
			hint = fmt.Sprintf("read around line %d and copy old exactly (indentation, tabs versus spaces, trailing spaces)", l)
		}
	}
	return refusal(CodeEditOldNotFound, detail, hint, fault.ActionRereadThenRetry, true).With("path", virtual).With("fingerprint", fp)
}

// looseFind looks for pat among the file lines comparing both sides with
// surrounding whitespace trimmed, within a bounded amount of work, and
// returns the 1-based line of the first match.
func looseFind(file []line, pat []string) (int, bool) {
	for len(pat) > 0 && strings.TrimSpace(pat[len(pat)-1]) == "" {
		pat = pat[:len(pat)-1] // old ended with a newline
	}
	if len(pat) == 0 {
		return 0, false
	}
	m := &matcher{budget: 1 << 22}
	m.reset(file)
	at, _, err := m.seek(pat, 0, false, levelWhitespace)
	if err != nil || at < 0 {
		return 0, false
	}
	return at + 1, true
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}
