package filechange

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/internal/corpus"
)

// TestCorpusExactBytes writes every text of the transport's nasty-string
// corpus through Write, Edit (as new text and as old text) and ApplyPatch
// (Add File and Update File) and requires the exact bytes on disk: CR,
// CRLF, NUL and the other C0 controls, emoji, trailing whitespace, a
// missing final newline, marker look-alikes.
func TestCorpusExactBytes(t *testing.T) {
	ctx := context.Background()
	const before, after = "«BEGIN»", "«END»"
	for i, c := range corpus.Cases(t) {
		t.Run(fmt.Sprintf("%02d %s", i, c.Name), func(t *testing.T) {
			p := newProject(t, map[string]string{
				"edit_new.txt": before + "<<X>>" + after,
				"edit_old.txt": before + c.Text + after,
				"update.txt":   "head\nMARK\ntail\n",
			})
			check := func(tool, rel, want string) {
				t.Helper()
				if got := p.file(rel); got != want {
					t.Errorf("%s: on disk %q, want %q", tool, got, want)
				}
			}

			if _, err := p.eng.Write(ctx, "write.txt", c.Text); err != nil {
				t.Fatalf("write: %v", err)
			}
			check("write", "write.txt", c.Text)

			if _, err := p.eng.Edit(ctx, "edit_new.txt", "<<X>>", c.Text); err != nil {
				t.Fatalf("edit new: %v", err)
			}
			check("edit new", "edit_new.txt", before+c.Text+after)

			if c.Text != "" {
				if _, err := p.eng.Edit(ctx, "edit_old.txt", c.Text, "Y"); err != nil {
					t.Fatalf("edit old: %v", err)
				}
				check("edit old", "edit_old.txt", before+"Y"+after)
			}

			if _, err := p.eng.ApplyPatch(ctx, "*** Begin Patch\n*** Add File: add.txt\n"+addLines(c.Text)+"*** End Patch\n"); err != nil {
				t.Fatalf("add: %v", body(t, err))
			}
			check("apply_patch add", "add.txt", c.Text)

			// Update lines take the file's line ending, so texts whose lines
			// end in CR are exact through Add File only.
			if !strings.Contains(c.Text, "\r\n") && !strings.HasSuffix(c.Text, "\r") {
				var h strings.Builder
				h.WriteString("@@\n head\n-MARK\n")
				if c.Text != "" {
					for _, l := range strings.Split(strings.TrimSuffix(c.Text, "\n"), "\n") {
						h.WriteString("+" + l + "\n")
					}
				}
				if _, err := p.eng.ApplyPatch(ctx, "*** Begin Patch\n*** Update File: update.txt\n"+h.String()+"*** End Patch\n"); err != nil {
					t.Fatalf("update: %v", body(t, err))
				}
				want := "head\n" + c.Text
				if c.Text != "" && !strings.HasSuffix(c.Text, "\n") {
					want += "\n"
				}
				check("apply_patch update", "update.txt", want+"tail\n")
			}
		})
	}
}

// addLines spells text as Add File lines, byte for byte.
func addLines(text string) string {
	if text == "" {
		return ""
	}
	var b strings.Builder
	rest := text
	for rest != "" {
		i := strings.IndexByte(rest, '\n')
		if i < 0 {
			b.WriteString("+" + rest + "\n" + markNoNewline + "\n")
			break
		}
		b.WriteString("+" + rest[:i+1])
		rest = rest[i+1:]
	}
	return b.String()
}
