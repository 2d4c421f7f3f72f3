package files

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

func TestStat(t *testing.T) {
	f := newFixture(t)
	when := time.Date(2025, 6, 7, 8, 9, 10, 123000000, time.UTC)
	if err := os.Chtimes(filepath.Join(f.root, "small.txt"), when, when); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path string
		want Info
		err  string
	}{
		{"small.txt", Info{Path: "/project/small.txt", Kind: KindFile, Size: 14, ModTime: "2025-06-07T08:09:10.123Z"}, ""},
		{"dir", Info{Path: "/project/dir", Kind: KindDir}, ""},
		{".", Info{Path: "/project", Kind: KindDir}, ""},
		{"link.txt", Info{Path: "/project/link.txt", Kind: KindSymlink, Size: 14, ModTime: "2025-06-07T08:09:10.123Z",
			Target: "/project/small.txt", TargetKind: KindFile}, ""},
		{"etc", Info{Path: "/project/etc", Kind: KindSymlink, TargetKind: "outside"}, ""},
		{"dangling", Info{Path: "/project/dangling", Kind: KindSymlink, TargetKind: "missing"}, ""},
		{"fifo", Info{Path: "/project/fifo", Kind: KindOther}, ""},
		{"nope", Info{}, "path_not_found"},
		{"../x", Info{}, "path_traversal"},
		{"etc/passwd", Info{}, "symlink_escape"},
		{"/etc/hosts", Info{}, "path_outside_scope"},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			got, err := f.r.Stat(tc.path)
			if tc.err != "" {
				if code := errCode(err); code != tc.err {
					t.Fatalf("err = %v (%s), want %s", err, code, tc.err)
				}
				if strings.Contains(err.Error(), f.root) {
					t.Fatal("error leaks the root")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, perr := time.Parse(time.RFC3339Nano, got.ModTime); perr != nil {
				t.Fatalf("mtime %q: %v", got.ModTime, perr)
			}
			if tc.want.ModTime == "" {
				got.ModTime = ""
			}
			if tc.want.Kind == KindSymlink && tc.want.Size == 0 {
				got.Size = 0 // the link's own size is its target text length
			}
			if got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func errCode(err error) string {
	if c := sandbox.Code(err); c != "" {
		return c
	}
	var pe *PathError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
