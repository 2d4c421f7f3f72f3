package search

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

func TestFind(t *testing.T) {
	tr := newTree(t)
	s := &Searcher{Scope: tr.scope, Limits: testLimits}
	cases := []struct {
		name  string
		req   FindRequest
		want  []string // paths, in order; "..." = prefix only
		check func(t *testing.T, res FindResult)
	}{
		{"name substring", FindRequest{Name: "deeper"}, []string{"/project/docs/deep/deeper", "/project/src/sub/deeper"}, nil},
		{"case insensitive", FindRequest{Name: "FOO.ts"}, []string{"/project/src/case/Foo.TS"}, nil},
		{"path substring", FindRequest{Name: "sub/deeper/w"}, []string{"/project/src/sub/deeper/w.test.ts", "/project/src/sub/deeper/w.ts"}, nil},
		{"in a directory", FindRequest{Path: "docs", Name: ".md"}, []string{"/project/docs/deep/deeper/x.md", "/project/docs/guide.md"}, nil},
		{"skipped dir listed, not entered", FindRequest{Name: "node_modules"}, []string{"/project/node_modules", "/project/src/node_modules"}, nil},
		{"skip dir contents", FindRequest{Name: "index.js"}, []string{}, nil},
		{"explicit skip dir entered", FindRequest{Path: "node_modules", Name: "index"}, []string{"/project/node_modules/pkg/index.js"}, nil},
		{"symlinks listed, not followed", FindRequest{Name: "link"}, []string{"/project/src/link.txt", "/project/src/linkdir"}, func(t *testing.T, res FindResult) {
			for _, e := range res.Entries {
				if e.Kind != "symlink" {
					t.Errorf("%s: kind %s", e.Path, e.Kind)
				}
			}
		}},
		{"outside secret not reachable", FindRequest{Name: "secret"}, []string{}, nil},
		{"content", FindRequest{Name: ".ts", Content: "export function"}, []string{"/project/src/sub/y.ts"}, func(t *testing.T, res FindResult) {
			if e := res.Entries[0]; e.Line != 1 || e.Size == 0 {
				t.Errorf("content entry %+v", e)
			}
		}},
		{"content line number", FindRequest{Path: "src", Content: "func Foo"}, []string{"/project/src/sub/z.go"}, func(t *testing.T, res FindResult) {
			if res.Entries[0].Line != 3 {
				t.Errorf("line %d", res.Entries[0].Line)
			}
		}},
		{"content skips binary", FindRequest{Content: "binary"}, []string{}, nil},
		{"content case sensitive", FindRequest{Path: "docs", Content: "Foo guide"}, []string{"/project/docs/guide.md"}, nil},
		{"everything bounded", FindRequest{Path: "weird"}, []string{"/project/weird/a\\b.txt", "/project/weird/anchors.txt", "..."}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.Find(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range res.Entries {
				got = append(got, e.Path)
			}
			want := tc.want
			if n := len(want); n > 0 && want[n-1] == "..." {
				want = want[:n-1]
				if len(got) > len(want) {
					got = got[:len(want)]
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("got %v\nwant %v", got, want)
			}
			if tc.check != nil {
				tc.check(t, res)
			}
		})
	}
}

func TestFindLimits(t *testing.T) {
	tr := newTree(t)
	s := &Searcher{Scope: tr.scope, Limits: Limits{MaxResults: 3}}
	res, _ := s.Find(context.Background(), FindRequest{})
	if len(res.Entries) != 3 || !res.Truncated || res.Reason != ReasonMaxResults {
		t.Fatalf("max results: %+v", res)
	}
	s.Limits = Limits{MaxEntries: 5}
	res, _ = s.Find(context.Background(), FindRequest{Name: "zzz"})
	if !res.Truncated || res.Reason != ReasonMaxEntries {
		t.Fatalf("max entries: %+v", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, _ = s.Find(ctx, FindRequest{})
	if !res.Truncated || res.Reason != ReasonTimeout {
		t.Fatalf("canceled: %+v", res)
	}
}

func TestFindErrors(t *testing.T) {
	tr := newTree(t)
	s := &Searcher{Scope: tr.scope}
	for _, tc := range []struct {
		req FindRequest
		err error
	}{
		{FindRequest{Path: "a.txt"}, ErrNotDirectory},
		{FindRequest{Path: "../"}, sandbox.ErrTraversal},
		{FindRequest{Path: "out"}, sandbox.ErrSymlinkEscape},
		{FindRequest{Content: "a\nb"}, ErrMultiline},
	} {
		_, err := s.Find(context.Background(), tc.req)
		if !errors.Is(err, tc.err) {
			t.Errorf("%+v: %v, want %v", tc.req, err, tc.err)
		}
		if err != nil && strings.Contains(err.Error(), tr.root) {
			t.Errorf("error leaks the root")
		}
	}
}
