//go:build unix

package filechange

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/internal/treetest"
)

func TestWriteCreates(t *testing.T) {
	cases := []struct {
		name, path, virtual, rel string
		dirs                     []string
	}{
		{"relative", "new.txt", "/project/new.txt", "new.txt", nil},
		{"virtual", "/project/v.txt", "/project/v.txt", "v.txt", nil},
		{"nested parents", "a/b/c.txt", "/project/a/b/c.txt", "a/b/c.txt", []string{"/project/a", "/project/a/b"}},
		{"under existing dir", "src/x.go", "/project/src/x.go", "src/x.go", nil},
		{"dot segments", "src/./../src/y.go", "/project/src/y.go", "src/y.go", nil},
		{"dangling link inside", "dangling", "/project/dangling", "target/made.txt", []string{"/project/target"}},
		{"through dir link inside", "srclink/z.go", "/project/srclink/z.go", "src/z.go", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"src/main.go": "package main\n", "dangling": "->target/made.txt", "srclink": "->src"})
			r, err := p.eng.Write(context.Background(), tc.path, "body\n")
			if err != nil {
				t.Fatal(body(t, err))
			}
			if r.Path != tc.virtual || !r.Created || r.BytesWritten != 5 || r.Fingerprint != files.Fingerprint([]byte("body\n")) {
				t.Errorf("result %+v", r)
			}
			if fmt.Sprint(r.CreatedDirs) != fmt.Sprint(tc.dirs) {
				t.Errorf("created dirs %v, want %v", r.CreatedDirs, tc.dirs)
			}
			if got := p.file(tc.rel); got != "body\n" {
				t.Errorf("on disk %q", got)
			}
		})
	}
}

func TestWriteNativeAbsolutePath(t *testing.T) {
	p := newProject(t, nil)
	r, err := p.eng.Write(context.Background(), filepath.Join(p.root, "abs.txt"), "x")
	if err != nil {
		t.Fatal(err)
	}
	if r.Path != "/project/abs.txt" || p.file("abs.txt") != "x" {
		t.Fatalf("%+v", r)
	}
	out, _ := json.Marshal(r)
	p.noHostPath("result", string(out))
}

// TestWriteOverwriteNeedsCoverage is the whole-file overwrite rule.
func TestWriteOverwriteNeedsCoverage(t *testing.T) {
	big := bigText(3000) // more than one /r page
	cases := []struct {
		name    string
		prepare func(p *project)
		code    string
	}{
		{"never read", func(p *project) {}, CodeReadRequired},
		{"read in full", func(p *project) { p.read("big.txt") }, ""},
		{"first page only", func(p *project) { p.readLines("big.txt", 1, 100) }, CodeReadIncomplete},
		{"pages accumulate", func(p *project) {
			p.readLines("big.txt", 1, 1000)
			p.readLines("big.txt", 1001, 2000)
			p.readLines("big.txt", 2001, 3000)
		}, ""},
		{"a gap", func(p *project) {
			p.readLines("big.txt", 1, 1000)
			p.readLines("big.txt", 1002, 3000)
		}, CodeReadIncomplete},
		{"changed on disk since the read", func(p *project) {
			p.read("big.txt")
			os.WriteFile(filepath.Join(p.root, "big.txt"), []byte(big+"tail\n"), 0o644)
		}, CodeStaleRead},
		{"pages of two versions", func(p *project) {
			p.readLines("big.txt", 1, 1500)
			os.WriteFile(filepath.Join(p.root, "big.txt"), []byte("X"+big), 0o644)
			p.readLines("big.txt", 1501, 3000)
		}, CodeReadIncomplete},
		{"own edit invalidates", func(p *project) {
			p.read("big.txt")
			if _, err := p.eng.Edit(context.Background(), "big.txt", "line 00007 ", "line 0000seven "); err != nil {
				p.t.Fatal(err)
			}
		}, CodeReadRequired},
		{"own write invalidates", func(p *project) {
			p.read("big.txt")
			if _, err := p.eng.Write(context.Background(), "big.txt", big+"more\n"); err != nil {
				p.t.Fatal(err)
			}
		}, CodeReadRequired},
		{"read through another spelling", func(p *project) { p.read("/project/sub/../big.txt") }, ""},
		{"read through a link", func(p *project) { p.read("biglink") }, ""},
		{"no ledger", func(p *project) { p.read("big.txt"); p.eng.Ledger = nil }, CodeReadRequired},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"big.txt": big, "sub/x": "", "biglink": "->big.txt"})
			tc.prepare(p)
			before := p.file("big.txt")
			_, err := p.eng.Write(context.Background(), "big.txt", "replaced\n")
			if got := codeOf(t, err); got != tc.code {
				t.Fatalf("code %q, want %q: %v", got, tc.code, err)
			}
			if err != nil {
				if p.file("big.txt") != before {
					t.Fatal("a refused write changed the file")
				}
				b := body(t, err)
				if !strings.Contains(b, `"agentAction":"reread_then_retry"`) || !strings.Contains(b, `"path":"/project/big.txt"`) {
					t.Errorf("refusal %s", b)
				}
				p.noHostPath("refusal", b)
				return
			}
			if p.file("big.txt") != "replaced\n" {
				t.Fatal("not replaced")
			}
		})
	}
}

// TestWriteIncompleteSaysWhere: the refusal names the first unread line
// and keeps the coverage already gathered (a refusal is not a mutation).
func TestWriteIncompleteSaysWhere(t *testing.T) {
	p := newProject(t, map[string]string{"f.txt": bigText(50)})
	p.readLines("f.txt", 1, 20)
	_, err := p.eng.Write(context.Background(), "f.txt", "x")
	b := body(t, err)
	for _, want := range []string{`lines 21-50 of 50 were not read`, `"readFrom":21`, `"missingLines":[[21,50]]`, `read from line 21`} {
		if !strings.Contains(b, want) {
			t.Errorf("refusal lacks %q: %s", want, b)
		}
	}
	p.readLines("f.txt", 21, 50)
	if _, err := p.eng.Write(context.Background(), "f.txt", "x"); err != nil {
		t.Fatalf("after reading the rest: %v", err)
	}
}

func TestWriteEmptyFileNeedsItsRead(t *testing.T) {
	p := newProject(t, map[string]string{"e.txt": ""})
	if _, err := p.eng.Write(context.Background(), "e.txt", "x"); codeOf(t, err) != CodeReadRequired {
		t.Fatalf("err = %v", err)
	}
	p.read("e.txt")
	if _, err := p.eng.Write(context.Background(), "e.txt", "x"); err != nil {
		t.Fatal(err)
	}
}

func TestWriteRefusals(t *testing.T) {
	p := newProject(t, map[string]string{"dir/a.txt": "a", "f.txt": "f"})
	if err := syscall.Mkfifo(filepath.Join(p.root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.eng.Limits.MaxFileBytes = 64
	cases := []struct {
		name, path, content, code string
	}{
		{"directory", "dir", "x", CodeIsDirectory},
		{"project root", "/project", "x", CodeIsDirectory},
		{"trailing slash", "newdir/", "x", "invalid_path"},
		{"fifo", "fifo", "x", CodeNotRegularFile},
		{"too large", "big.txt", strings.Repeat("x", 65), CodeContentTooLarge},
		{"parent is a file", "f.txt/child", "x", "not_a_directory"},
		{"empty path", "", "x", "invalid_path"},
		{"nul in path", "a\x00b", "x", "invalid_path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := treetest.Snapshot(t, p.root)
			_, err := p.eng.Write(context.Background(), tc.path, tc.content)
			if got := codeOf(t, err); got != tc.code {
				t.Fatalf("code %q, want %q (%v)", got, tc.code, err)
			}
			p.noHostPath("refusal", body(t, err))
			treetest.Same(t, "tree", before, treetest.Snapshot(t, p.root))
		})
	}
}

// TestWriteAtomicFailureLeavesNothing: a failure between the temporary
// file and the rename leaves the target as it was and no temporary file.
func TestWriteAtomicFailureLeavesNothing(t *testing.T) {
	for _, op := range []string{"write", "rename", "mkdir"} {
		t.Run(op, func(t *testing.T) {
			p := newProject(t, map[string]string{"a.txt": "old\n"})
			p.read("a.txt")
			p.eng.hook = func(o, rel string) error {
				if o == op {
					return fs.ErrPermission
				}
				return nil
			}
			before := treetest.Snapshot(t, p.root)
			if op != "mkdir" {
				if _, err := p.eng.Write(context.Background(), "a.txt", "new\n"); codeOf(t, err) != CodePermissionDenied {
					t.Errorf("replace: %v", err)
				}
			}
			_, err2 := p.eng.Write(context.Background(), "x/y/new.txt", "new\n")
			if codeOf(t, err2) != CodePermissionDenied {
				t.Errorf("create: %v", err2)
			}
			treetest.Same(t, "tree", before, treetest.Snapshot(t, p.root))
		})
	}
}

// bigText is n numbered lines of about 40 bytes.
func bigText(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %05d the quick brown fox jumps\n", i)
	}
	return b.String()
}
