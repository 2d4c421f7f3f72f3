package filechange

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// FuzzParsePatch: whatever the text, the parser returns a patch or a
// *PatchError without panicking; a parsed patch is well formed and its
// canonical Format parses back to the same patch.
func FuzzParsePatch(f *testing.F) {
	names, _ := filepath.Glob("testdata/parse/*.txtar")
	for _, name := range names {
		ar, err := txtar.ParseFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range ar.Files {
			if file.Name == "patch" {
				f.Add(string(file.Data))
			}
		}
	}
	f.Add("*** Begin Patch\r\n*** Add File: a\r\n+x\r\n\\ No newline at end of file\r\n*** End Patch")
	f.Add("*** Begin Patch\n*** Update File: a\n@@ -1 +1 @@ -2 +2 @@ x\n-\r\r\n+\n\n\n*** End of File\n*** End Patch")
	lim := Limits{MaxPatchBytes: 64 << 10, MaxPatchLines: 4096, MaxPatchFiles: 64, MaxPatchHunks: 256}
	f.Fuzz(func(t *testing.T, text string) {
		p, err := parsePatch(text, lim)
		if err != nil {
			var pe *PatchError
			if !errors.As(err, &pe) || pe.Code == "" || pe.Line < 0 || pe.Line > strings.Count(text, "\n")+1 {
				t.Fatalf("bad error %#v", err)
			}
			return
		}
		if len(p.Files) > lim.MaxPatchFiles {
			t.Fatalf("%d files", len(p.Files))
		}
		for _, fp := range p.Files {
			if fp.Path == "" || strings.ContainsAny(fp.Path, "\n") {
				t.Fatalf("path %q", fp.Path)
			}
			for _, h := range fp.Hunks {
				if len(h.Lines) == 0 {
					t.Fatal("empty hunk")
				}
				for _, l := range h.Lines {
					if l == "" || !strings.ContainsRune(" -+", rune(l[0])) || strings.HasSuffix(l, "\r") || strings.Contains(l, "\n") {
						t.Fatalf("hunk line %q", l)
					}
				}
			}
		}
		again, err := parsePatch(p.Format(), Limits{})
		if err != nil {
			t.Fatalf("Format does not parse: %v\n%q", err, p.Format())
		}
		if !samePatch(p, again) {
			t.Fatalf("Format does not round-trip\n%q", p.Format())
		}
	})
}

// FuzzApplyHunks: any parsed hunks against any file content apply or fail
// cleanly; and a hunk built from the file's own lines always applies,
// leaving every byte before and after the replaced lines as it was and the
// replacement in the file's dominant line ending.
func FuzzApplyHunks(f *testing.F) {
	f.Add("a\nb\nc\n", "*** Begin Patch\n*** Update File: f\n@@\n-b\n+B\n*** End Patch", uint8(1), uint8(1), "x|y")
	f.Add("a\r\nb\r\nc", "*** Begin Patch\n*** Update File: f\n@@ a\n+i\n*** End of File\n*** End Patch", uint8(2), uint8(0), "")
	f.Add("x  \n\tx\nx\n", "*** Begin Patch\n*** Update File: f\n x\n-x\n\\ No newline at end of file\n*** End Patch", uint8(0), uint8(2), "—")
	lim := Limits{MaxPatchBytes: 16 << 10, MaxPatchHunks: 64}
	f.Fuzz(func(t *testing.T, content, patch string, from, n uint8, repl string) {
		if len(content) > 16<<10 {
			return
		}
		if p, err := parsePatch(patch, lim); err == nil {
			for _, fp := range p.Files {
				m := &matcher{budget: 1 << 20}
				out, res, err := applyHunks(m, content, fp.Hunks)
				if err == nil && (len(res) != len(fp.Hunks) || len(out) > len(content)+len(patch)*2) {
					t.Fatalf("result %d hunks, %d bytes", len(res), len(out))
				}
			}
		}
		lines := splitLines(content)
		if len(lines) == 0 {
			return
		}
		i := int(from) % len(lines)
		k := 1 + int(n)%(len(lines)-i)
		old := make([]string, k)
		for j := range old {
			old[j] = lines[i+j].text
		}
		var h Hunk
		for _, o := range old {
			h.Lines = append(h.Lines, "-"+o)
		}
		var added []string
		if repl != "" {
			added = strings.Split(strings.NewReplacer("\n", "", "\r", "").Replace(repl), "|")
		}
		for _, a := range added {
			h.Lines = append(h.Lines, "+"+a)
		}
		m := &matcher{budget: 1 << 40}
		m.reset(lines)
		at, _, _ := m.seek(old, 0, false, levelExact)
		if at < 0 || at > i {
			t.Fatalf("own lines not found: %d", at)
		}
		out, _, err := applyHunks(&matcher{budget: 1 << 40}, content, []Hunk{h})
		if err != nil {
			t.Fatalf("own lines do not apply: %v", err)
		}
		prefix := joinLines(lines[:at])
		if at+k == len(lines) && len(added) == 0 && at > 0 {
			// The last lines were deleted: the new last line takes over the
			// file's final-newline state.
			prefix = strings.TrimSuffix(strings.TrimSuffix(prefix, "\n"), "\r")
			if lines[len(lines)-1].eol != "" {
				prefix += lines[at-1].eol
			}
		}
		if !strings.HasPrefix(out, prefix) {
			t.Fatalf("prefix changed: %q -> %q", content, out)
		}
		if at+k < len(lines) {
			suffix := joinLines(lines[at+k:])
			eol := dominantEOL(lines)
			mid := ""
			for _, a := range added {
				mid += a + eol
			}
			if out != prefix+mid+suffix {
				t.Fatalf("%q with %v at %d: got %q, want %q", content, h.Lines, at, out, prefix+mid+suffix)
			}
		}
	})
}
