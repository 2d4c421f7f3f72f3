package mutate

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
