package files

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

// FuzzReadPages reads arbitrary file contents through small allowances and
// follows NextStartLine: each page is exactly the file's bytes for the lines
// it claims (a clipped line excepted), pages never go backwards, whole lines
// concatenate back to the file, and coverage completes exactly when every
// line was returned whole.
func FuzzReadPages(f *testing.F) {
	f.Add([]byte("one\ntwo\nthree\n"), uint8(8))
	f.Add([]byte("a very long first line\nb"), uint8(5))
	f.Add([]byte("\n\n\n"), uint8(1))
	f.Add([]byte("h\xc3\xa9llo w\xc3\xb6rld\n\xf0\x9f\x98\x80\n"), uint8(3))
	f.Add([]byte{}, uint8(4))
	root := f.TempDir()
	scope, err := sandbox.New(root)
	if err != nil {
		f.Fatal(err)
	}
	path := filepath.Join(root, "f.txt")
	f.Fuzz(func(t *testing.T, data []byte, capacity uint8) {
		if bytes.IndexByte(data[:min(len(data), sniffBytes)], 0) >= 0 {
			return // binary: no content by design
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r := &Reader{Scope: scope, Limits: Limits{SingleFileCap: int(capacity) + 1}}
		lines := bytes.SplitAfter(data, []byte("\n"))
		if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
			lines = lines[:len(lines)-1]
		}
		var cov Coverage
		var whole []byte
		for start, skip, pages := 1, 0, 0; start != 0; pages++ {
			if pages > len(data)+2 {
				t.Fatal("pages do not progress")
			}
			res, err := r.Read([]Target{{Path: "f.txt", Start: start, Skip: skip}})
			if err != nil {
				t.Fatal(err)
			}
			p := res.Files[0]
			if p.Error != nil {
				t.Fatalf("page from %d: %+v", start, p.Error)
			}
			if p.TotalLines != len(lines) || p.Fingerprint != Fingerprint(data) {
				t.Fatalf("total %d (want %d) / fingerprint", p.TotalLines, len(lines))
			}
			// over the cap only to show one whole character
			if _, n := utf8.DecodeRuneInString(p.Content); len(p.Content) > r.Limits.SingleFileCap && n != len(p.Content) {
				t.Fatalf("page of %d bytes over a %d cap", len(p.Content), r.Limits.SingleFileCap)
			}
			if p.StartByte != skip {
				t.Fatalf("page from line %d byte %d starts at byte %d", start, skip, p.StartByte)
			}
			if p.StartLine > 0 {
				want := bytes.Join(lines[p.StartLine-1:p.EndLine], nil)[p.StartByte:]
				if p.ClippedLine {
					if !bytes.HasPrefix(want, []byte(p.Content)) || (utf8.Valid(want) && !utf8.ValidString(p.Content)) {
						t.Fatalf("clipped line %d is not a clean piece", p.StartLine)
					}
				} else if p.Content != string(want) {
					t.Fatalf("lines %d-%d: content differs", p.StartLine, p.EndLine)
				}
				whole = append(whole, p.Content...)
			}
			cov.ObserveResult(p)
			if p.NextStartLine != 0 && (p.NextStartLine < p.StartLine || p.NextStartLine == p.StartLine && p.NextSkip <= p.StartByte) {
				t.Fatalf("next %d/%d after %d/%d", p.NextStartLine, p.NextSkip, p.StartLine, p.StartByte)
			}
			start, skip = p.NextStartLine, p.NextSkip
		}
		// Following next, clipped lines included, shows the whole file,
		// and that is complete coverage.
		if !bytes.Equal(whole, data) {
			t.Fatal("pages do not reconstruct the file")
		}
		if !cov.Complete(Fingerprint(data)) {
			t.Fatalf("coverage incomplete after every page: missing %v", cov.Missing())
		}
	})
}
