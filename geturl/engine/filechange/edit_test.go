package filechange

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/engine/files"
)

func TestEdit(t *testing.T) {
	cases := []struct {
		name     string
		file     string
		old, new string
		want     string // file afterwards
		line     int
		endings  string
		code     string
		detail   string // substring of the refusal's JSON
	}{
		{name: "single line", file: "a\nb\nc\n", old: "b", new: "B", want: "a\nB\nc\n", line: 2},
		{name: "multi line", file: "a\nb\nc\n", old: "a\nb\n", new: "x\n", want: "x\nc\n", line: 1},
		{name: "delete text", file: "keep drop keep", old: " drop", new: "", want: "keep keep", line: 1},
		{name: "no final newline kept", file: "a\nlast", old: "last", new: "LAST", want: "a\nLAST", line: 2},
		{name: "trailing whitespace exact", file: "x  \ny\n", old: "x  \n", new: "x\n", want: "x\ny\n", line: 1},
		{name: "absent", file: "abc\n", old: "abd", new: "x", code: CodeEditOldNotFound, detail: "does not occur"},
		{name: "ambiguous", file: "x\nx\nx\n", old: "x", new: "y", code: CodeEditOldAmbiguous, detail: `occurs 3 times in /project/f.txt (lines 1, 2, 3)","repairHint`},
		{name: "ambiguous counts overlaps", file: "aaa", old: "aa", new: "b", code: CodeEditOldAmbiguous, detail: `"occurrences":2`},
		{name: "empty old", file: "abc", old: "", new: "x", code: CodeEditOldEmpty},
		{name: "no change", file: "abc", old: "b", new: "b", code: CodeEditNoChange},
		{name: "indentation differs", file: "func f() {\n\treturn 1\n}\n", old: "    return 1\n", new: "x", code: CodeEditOldNotFound, detail: "matches at line 2"},
		{name: "crlf exact", file: "a\r\nb\r\nc\r\n", old: "b\r\n", new: "B\r\n", want: "a\r\nB\r\nc\r\n", line: 2},
		{name: "crlf file, lf old and new", file: "a\r\nb\r\nc\r\n", old: "a\nb\n", new: "x\ny\nz\n", want: "x\r\ny\r\nz\r\nc\r\n", line: 1, endings: "crlf"},
		{name: "crlf file, single-line old, lf new", file: "a\r\nb\r\n", old: "b", new: "b1\nb2", want: "a\r\nb1\r\nb2\r\n", line: 2, endings: "crlf"},
		{name: "crlf file, lf old absent", file: "a\r\nb\r\n", old: "a\nc\n", new: "x", code: CodeEditOldNotFound},
		{name: "lf file, crlf old", file: "a\nb\n", old: "a\r\nb\r\n", new: "x", code: CodeEditOldNotFound, detail: "LF line endings"},
		{name: "lf file, crlf new kept", file: "a\nb\n", old: "b\n", new: "c\r\n", want: "a\nc\r\n", line: 2},
		{name: "mixed file used as given", file: "a\r\nb\nc\r\n", old: "b\n", new: "x\ny\n", want: "a\r\nx\ny\nc\r\n", line: 2},
		{name: "crlf file, same once converted", file: "a\r\nb\r\n", old: "a\r\n", new: "a\n", code: CodeEditNoChange},
		{name: "ambiguous after crlf retry", file: "a\r\nb\r\na\r\nb\r\n", old: "a\nb", new: "x", code: CodeEditOldAmbiguous},
		{name: "bytes beyond utf-8", file: "caf\xe9 \x00 ok\n", old: "\xe9 \x00", new: "\xc3\xa9", want: "caf\xc3\xa9 ok\n", line: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"f.txt": tc.file})
			r, err := p.eng.Edit(context.Background(), "f.txt", tc.old, tc.new)
			if got := codeOf(t, err); got != tc.code {
				t.Fatalf("code %q, want %q (%v)", got, tc.code, err)
			}
			if err != nil {
				b := body(t, err)
				if !strings.Contains(b, tc.detail) {
					t.Errorf("refusal lacks %q: %s", tc.detail, b)
				}
				if p.file("f.txt") != tc.file {
					t.Error("a refused edit changed the file")
				}
				return
			}
			if got := p.file("f.txt"); got != tc.want {
				t.Fatalf("file %q, want %q", got, tc.want)
			}
			want := EditResult{Path: "/project/f.txt", Line: tc.line, BytesWritten: len(tc.want), Fingerprint: files.Fingerprint([]byte(tc.want)),
				PreviousFingerprint: files.Fingerprint([]byte(tc.file)), LineEndings: tc.endings}
			if *r != want {
				t.Errorf("result %+v\nwant   %+v", *r, want)
			}
		})
	}
}

func TestEditRefusals(t *testing.T) {
	p := newProject(t, map[string]string{"dir/a": "a", "big": strings.Repeat("x", 100)})
	p.eng.Limits.MaxFileBytes = 64
	cases := []struct{ name, path, code string }{
		{"missing file", "nope.txt", "path_not_found"},
		{"directory", "dir", CodeIsDirectory},
		{"too large", "big", CodeFileTooLarge},
		{"outside", "../x", "path_traversal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.eng.Edit(context.Background(), tc.path, "x", "y")
			if got := codeOf(t, err); got != tc.code {
				t.Fatalf("code %q, want %q (%v)", got, tc.code, err)
			}
			p.noHostPath("refusal", body(t, err))
		})
	}
}

func TestEditAmbiguousListsFirstLines(t *testing.T) {
	p := newProject(t, map[string]string{"f": strings.Repeat("dup\n", 25)})
	_, err := p.eng.Edit(context.Background(), "f", "dup", "x")
	b := body(t, err)
	if !strings.Contains(b, `"occurrences":25`) || !strings.Contains(b, `"lines":[1,2,3,4,5,6,7,8,9,10]`) {
		t.Fatal(b)
	}
}

func TestEditKeepsModeAndLink(t *testing.T) {
	p := newProject(t, map[string]string{"run.sh": "echo a\n", "link.sh": "->run.sh"})
	os.Chmod(filepath.Join(p.root, "run.sh"), 0o750)
	r, err := p.eng.Edit(context.Background(), "link.sh", "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	if r.Path != "/project/link.sh" || p.file("run.sh") != "echo b\n" || p.mode("run.sh").Perm() != 0o750 {
		t.Fatalf("%+v %q %v", r, p.file("run.sh"), p.mode("run.sh"))
	}
	if p.mode("link.sh")&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced by a file")
	}
}

func TestOccurrences(t *testing.T) {
	cases := []struct {
		s, old string
		first  int
		n      int
		lines  string
	}{
		{"abc", "x", -1, 0, "[]"},
		{"abc", "b", 1, 1, "[1]"},
		{"aaaa", "aa", 0, 3, "[1 1 1]"},
		{"a\nb\na\n", "a", 0, 2, "[1 3]"},
	}
	for _, tc := range cases {
		first, n, lines := occurrences(tc.s, tc.old)
		if first != tc.first || n != tc.n || fmt.Sprint(lines) != tc.lines && !(lines == nil && tc.lines == "[]") {
			t.Errorf("occurrences(%q, %q) = %d %d %v", tc.s, tc.old, first, n, lines)
		}
	}
	if _, n, _ := occurrences(strings.Repeat("a", 3*maxCounted), "a"); n != maxCounted {
		t.Errorf("count not bounded: %d", n)
	}
}
