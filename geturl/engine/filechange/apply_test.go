package filechange

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/internal/treetest"
)

// TestApplyBytes checks the bytes an update leaves behind: line endings,
// the final newline, and bytes beyond ASCII.
func TestApplyBytes(t *testing.T) {
	cases := []struct {
		name, file, hunks, want, code string
	}{
		{name: "lf", file: "a\nb\nc\n", hunks: "@@\n a\n-b\n+B\n", want: "a\nB\nc\n"},
		{name: "crlf file, lf patch", file: "a\r\nb\r\nc\r\n", hunks: "@@\n a\n-b\n+B\n+B2\n", want: "a\r\nB\r\nB2\r\nc\r\n"},
		{name: "lf file, crlf patch", file: "a\nb\n", hunks: "@@\r\n a\r\n-b\r\n+B\r\n", want: "a\nB\n"},
		{name: "mixed file takes the majority", file: "a\r\nb\r\nc\n", hunks: "@@\n c\n+d\n", want: "a\r\nb\r\nc\nd\r\n"},
		{name: "no final newline kept", file: "a\nb", hunks: "@@\n a\n-b\n+B\n", want: "a\nB"},
		{name: "no final newline, append", file: "a\nb", hunks: "@@\n b\n+c\n", want: "a\nb\nc"},
		{name: "no final newline, change elsewhere", file: "a\nb\nc", hunks: "@@\n-a\n+A\n", want: "A\nb\nc"},
		{name: "no final newline, delete the last line", file: "a\nb\nc", hunks: "@@\n-c\n", want: "a\nb"},
		{name: "no final newline, delete the last line with context", file: "a\nb\nc", hunks: "@@\n b\n-c\n", want: "a\nb"},
		{name: "no final newline, insert at the end", file: "a\nb", hunks: "@@\n+c\n", want: "a\nb\nc"},
		{name: "final newline, append keeps it", file: "a\n", hunks: "@@\n a\n+b\n", want: "a\nb\n"},
		{name: "marker drops the final newline", file: "a\nb\n", hunks: "@@\n a\n-b\n+B\n\\ No newline at end of file\n", want: "a\nB"},
		{name: "marker after removed line only", file: "a\nb", hunks: "@@\n a\n-b\n\\ No newline at end of file\n+B\n", want: "a\nB"},
		{name: "marker away from the end", file: "a\nb\nc\n", hunks: "@@\n-a\n+A\n\\ No newline at end of file\n", code: CodePatchHunkNotFound},
		{name: "marker on a hunk before another", file: "a\nb\nc\n", hunks: "@@\n-a\n+A\n\\ No newline at end of file\n@@\n-c\n+C\n", code: CodePatchHunkNotFound},
		{name: "delete every line", file: "a\nb\n", hunks: "@@\n-a\n-b\n", want: ""},
		{name: "insert into an empty file", file: "", hunks: "@@\n+first\n", want: "first\n"},
		{name: "lone cr is text", file: "a\rb\n", hunks: "@@\n-a\rb\n+x\n", want: "x\n"},
		{name: "nul, emoji, trailing space", file: "x\x00y 😀  \n", hunks: "@@\n-x\x00y 😀  \n+z\x00 🎉 \n", want: "z\x00 🎉 \n"},
		{name: "tab context matched loosely keeps tab", file: "\tkeep\nold\n", hunks: "@@\n  keep\n-old\n+new\n", want: "\tkeep\nnew\n"},
		{name: "exact wins over loose", file: "x \nx\n", hunks: "@@\n-x\n+y\n", want: "x \ny\n"},
		{name: "first match below the cursor", file: "k\nv\nk\nv\n", hunks: "@@\n-v\n+1\n@@\n-v\n+2\n", want: "k\n1\nk\n2\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"f": tc.file})
			_, err := p.eng.ApplyPatch(context.Background(), "*** Begin Patch\n*** Update File: f\n"+tc.hunks+"*** End Patch\n")
			if got := codeOf(t, err); got != tc.code {
				t.Fatalf("code %q, want %q (%v)", got, tc.code, err)
			}
			want := tc.want
			if err != nil {
				want = tc.file
			}
			if got := p.file("f"); got != want {
				t.Fatalf("file %q, want %q", got, want)
			}
		})
	}
}

func TestApplyAddBytes(t *testing.T) {
	cases := []struct{ name, lines, want string }{
		{"lf", "+a\n+b\n", "a\nb\n"},
		{"crlf patch adds crlf file", "+a\r\n+b\r\n", "a\r\nb\r\n"},
		{"no final newline", "+a\n+b\n\\ No newline at end of file\n", "a\nb"},
		{"empty file", "", ""},
		{"an empty line", "+\n", "\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, nil)
			r, err := p.eng.ApplyPatch(context.Background(), "*** Begin Patch\n*** Add File: d/n.txt\n"+tc.lines+"*** End Patch\n")
			if err != nil {
				t.Fatal(err)
			}
			if got := p.file("d/n.txt"); got != tc.want || r.BytesWritten != len(tc.want) {
				t.Fatalf("file %q (%d bytes reported), want %q", got, r.BytesWritten, tc.want)
			}
		})
	}
}

func TestApplySymlinks(t *testing.T) {
	tree := map[string]string{"real.txt": "r\n", "link.txt": "->real.txt", "dir/x.txt": "x\n", "dirlink": "->dir"}
	cases := []struct {
		name, patch, code string
		check             func(p *project)
	}{
		{"update through a link changes the target, keeps the link",
			"*** Update File: link.txt\n@@\n-r\n+R\n", "", func(p *project) {
				if p.file("real.txt") != "R\n" || p.mode("link.txt")&os.ModeSymlink == 0 {
					p.t.Error("target not updated or link replaced")
				}
			}},
		{"delete of a link is refused", "*** Delete File: link.txt\n", CodeNotRegularFile, nil},
		{"move of a link is refused", "*** Update File: link.txt\n*** Move to: other.txt\n", CodeNotRegularFile, nil},
		{"delete through a directory link", "*** Delete File: dirlink/x.txt\n", "", func(p *project) {
			if !p.missing("dir/x.txt") {
				p.t.Error("not deleted")
			}
		}},
		{"add through a directory link", "*** Add File: dirlink/y.txt\n+y\n", "", func(p *project) {
			if p.file("dir/y.txt") != "y\n" {
				p.t.Error("not added")
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, tree)
			before := treetest.Snapshot(t, p.root)
			_, err := p.eng.ApplyPatch(context.Background(), "*** Begin Patch\n"+tc.patch+"*** End Patch")
			if got := codeOf(t, err); got != tc.code {
				t.Fatalf("code %q, want %q (%v)", got, tc.code, err)
			}
			if err != nil {
				treetest.Same(t, "tree", before, treetest.Snapshot(t, p.root))
				return
			}
			tc.check(p)
		})
	}
}

// TestApplyInvalidatesCoverage: a successful patch forgets the read
// coverage of what it touched; a refused one keeps it.
func TestApplyInvalidatesCoverage(t *testing.T) {
	p := newProject(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	p.read("a.txt")
	p.read("b.txt")
	if _, err := p.eng.ApplyPatch(context.Background(), "*** Begin Patch\n*** Update File: a.txt\n@@\n-zzz\n+y\n*** End Patch"); err == nil {
		t.Fatal("a patch of absent lines applied")
	}
	if _, err := p.eng.Write(context.Background(), "a.txt", "after refusal\n"); err != nil {
		t.Fatalf("coverage lost to a refused patch: %v", err)
	}
	p.read("a.txt")
	if _, err := p.eng.ApplyPatch(context.Background(), "*** Begin Patch\n*** Update File: a.txt\n@@\n-after refusal\n+patched\n*** End Patch"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.eng.Write(context.Background(), "a.txt", "x"); codeOf(t, err) != CodeReadRequired {
		t.Fatalf("patched file still covered: %v", err)
	}
	if _, err := p.eng.Write(context.Background(), "b.txt", "x"); err != nil {
		t.Fatalf("untouched file lost its coverage: %v", err)
	}
}

func TestApplyBounds(t *testing.T) {
	big := strings.Repeat("same\n", 4000)
	cases := []struct {
		name  string
		lim   Limits
		tree  map[string]string
		patch string
		code  string
	}{
		{"matching work", Limits{MaxMatchWork: 10_000}, map[string]string{"f": big + "end\n"},
			"*** Update File: f\n@@\n" + strings.Repeat(" same\n", 50) + "-nope\n", CodePatchTooComplex},
		{"file to update too large", Limits{MaxFileBytes: 100}, map[string]string{"f": big},
			"*** Update File: f\n@@\n-same\n+x\n", CodeFileTooLarge},
		{"result too large", Limits{MaxFileBytes: 8}, map[string]string{"f": "a\n"},
			"*** Update File: f\n@@\n-a\n+0123456789\n", CodeContentTooLarge},
		{"added file too large", Limits{MaxFileBytes: 4}, nil,
			"*** Add File: f\n+0123456789\n", CodeContentTooLarge},
		{"patch too large", Limits{MaxPatchBytes: 16}, nil,
			"*** Add File: f\n+x\n", CodePatchTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, tc.tree)
			p.eng.Limits = tc.lim
			before := treetest.Snapshot(t, p.root)
			_, err := p.eng.ApplyPatch(context.Background(), "*** Begin Patch\n"+tc.patch+"*** End Patch")
			if got := codeOf(t, err); got != tc.code {
				t.Fatalf("code %q, want %q (%v)", got, tc.code, err)
			}
			treetest.Same(t, "tree", before, treetest.Snapshot(t, p.root))
		})
	}
}
