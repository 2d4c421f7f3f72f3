package filechange

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestParseGolden parses the "patch" file of every testdata/parse archive
// and compares the result (or the error) with its "want" file; -update
// rewrites the "want" files.
func TestParseGolden(t *testing.T) {
	names, _ := filepath.Glob("testdata/parse/*.txtar")
	if len(names) == 0 {
		t.Fatal("no golden files")
	}
	for _, name := range names {
		t.Run(strings.TrimSuffix(filepath.Base(name), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(name)
			if err != nil {
				t.Fatal(err)
			}
			var patch []byte
			wantAt := -1
			for i, f := range ar.Files {
				switch f.Name {
				case "patch":
					patch = f.Data
				case "want":
					wantAt = i
				}
			}
			got := parseJSON(t, string(patch))
			isErr := strings.HasPrefix(filepath.Base(name), "err_")
			if isErr != bytes.Contains(got, []byte(`"error":`)) {
				t.Errorf("err_ prefix says error=%v, got %s", isErr, got)
			}
			if *update {
				if wantAt < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "want"})
					wantAt = len(ar.Files) - 1
				}
				ar.Files[wantAt].Data = got
				if err := os.WriteFile(name, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if wantAt < 0 {
				t.Fatal("no want file (run with -update)")
			}
			if want := ar.Files[wantAt].Data; !bytes.Equal(got, want) {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// parseJSON is the golden form of a parse: the patch, or its error.
func parseJSON(t *testing.T, text string) []byte {
	t.Helper()
	var v any
	p, err := ParsePatch(text)
	if err != nil {
		var pe *PatchError
		if !errors.As(err, &pe) {
			t.Fatalf("error %T", err)
		}
		v = struct {
			Error string `json:"error"`
			Code  string `json:"code"`
			Line  int    `json:"line"`
		}{pe.Error(), pe.Code, pe.Line}
	} else {
		v = p
		if again, err := ParsePatch(p.Format()); err != nil || !samePatch(p, again) {
			t.Errorf("Format does not round-trip: %v\n%s", err, p.Format())
		}
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// samePatch compares patches ignoring line numbers.
func samePatch(a, b *Patch) bool {
	strip := func(p *Patch) string {
		c := Patch{Files: make([]FilePatch, len(p.Files))}
		for i, f := range p.Files {
			f.Line = 0
			f.Hunks = append([]Hunk(nil), f.Hunks...)
			for j := range f.Hunks {
				f.Hunks[j].Line = 0
			}
			c.Files[i] = f
		}
		out, _ := json.Marshal(c)
		return string(out)
	}
	return strip(a) == strip(b)
}

func TestParseCRLFPatch(t *testing.T) {
	text := "*** Begin Patch\r\n*** Add File: a.txt\r\n+one\r\n+two\r\n*** Update File: b.txt\r\n@@ ctx\r\n-old\r\n+new\r\n\r\n*** End Patch\r\n"
	p, err := ParsePatch(text)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Files[0].Content; got != "one\r\ntwo\r\n" {
		t.Errorf("add content %q: a CRLF patch adds a CRLF file", got)
	}
	h := p.Files[1].Hunks[0]
	if p.Files[1].Path != "b.txt" || h.Context[0] != "ctx" || strings.Join(h.Lines, "|") != "-old|+new" {
		t.Errorf("update %+v", p.Files[1])
	}
}

func TestParseLimits(t *testing.T) {
	section := "*** Update File: a\n@@\n-a\n+b\n"
	cases := []struct {
		name string
		lim  Limits
		text string
		line int
	}{
		{"bytes", Limits{MaxPatchBytes: 10}, "*** Begin Patch\n*** End Patch\n", 0},
		{"lines", Limits{MaxPatchLines: 3}, "*** Begin Patch\n\n\n\n*** End Patch\n", 0},
		{"files", Limits{MaxPatchFiles: 2}, "*** Begin Patch\n" + strings.Repeat("*** Delete File: a\n", 3) + "*** End Patch", 4},
		{"hunks", Limits{MaxPatchHunks: 2}, "*** Begin Patch\n" + strings.Repeat(section, 3) + "*** End Patch", 11},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parsePatch(tc.text, tc.lim)
			var pe *PatchError
			if !errors.As(err, &pe) || pe.Code != CodePatchTooLarge || pe.Line != tc.line {
				t.Fatalf("err = %#v", err)
			}
		})
	}
}

func TestParseErrorsQuoteBounded(t *testing.T) {
	long := strings.Repeat("é", 200)
	_, err := ParsePatch("*** Begin Patch\n" + long + "\n*** End Patch")
	if err == nil || len(err.Error()) > 300 || !strings.Contains(err.Error(), "…") {
		t.Fatalf("err = %v", err)
	}
}

func TestHunkHeader(t *testing.T) {
	cases := []struct {
		in, ctx string
		ok      bool
	}{
		{"@@", "", true},
		{"@@ def f():", "def f():", true},
		{"@@   indented", "  indented", true},
		{"@@ -1,2 +3,4 @@ func f", "func f", true},
		{"@@ -1 +1 @@", "", true},
		{"@@ -1 +1 @@ -2 +2 @@ x", "x", true},
		{"@@ -a +1 @@ x", "-a +1 @@ x", true},
		{"@@ -1, +1 @@ x", "-1, +1 @@ x", true},
		{"@@ -1 +1 @@x", "-1 +1 @@x", true},
		{"@@x", "", false},
		{"@@@", "", false},
	}
	for _, tc := range cases {
		ctx, ok := hunkHeader(tc.in)
		if ctx != tc.ctx || ok != tc.ok {
			t.Errorf("hunkHeader(%q) = %q, %v; want %q, %v", tc.in, ctx, ok, tc.ctx, tc.ok)
		}
	}
}

func TestHunkSides(t *testing.T) {
	h := Hunk{Lines: []string{" a", "-b", "+c", " d"}}
	if strings.Join(h.Old(), "|") != "a|b|d" || strings.Join(h.New(), "|") != "a|c|d" {
		t.Fatal(h.Old(), h.New())
	}
}
