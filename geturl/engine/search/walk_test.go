package search

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// memDir is a directory of a tree in memory, as walk sees an OS's: each
// open counted, so the test sees every one closed.
type memDir struct {
	t    *memTree
	path string
}

type memTree struct {
	mode       map[string]fs.FileMode // by slash path below the root
	unreadable map[string]bool
	open       int
}

func (d *memDir) list() []entry {
	var ents []entry
	// Listed in reverse, as an OS may list them in any order.
	for p, m := range d.t.mode {
		dir, name := "", p
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			dir, name = p[:i], p[i+1:]
		}
		if dir == d.path {
			ents = append(ents, entry{name: name, mode: m, dir: d, listed: int64(len(p))})
		}
	}
	slices.SortFunc(ents, func(a, b entry) int { return strings.Compare(b.name, a.name) })
	return ents
}

func (d *memDir) openDir(name string) (dirHandle, error) {
	p := name
	if d.path != "" {
		p = d.path + "/" + name
	}
	if d.t.mode[p] != fs.ModeDir || d.t.unreadable[p] {
		return nil, errors.New("cannot open " + p)
	}
	d.t.open++
	return &memDir{t: d.t, path: p}, nil
}

func (d *memDir) size(string) int64 { return -1 }
func (d *memDir) close()            { d.t.open-- }

func TestWalkOrderAndRules(t *testing.T) {
	tr := &memTree{mode: map[string]fs.FileMode{
		"B": 0, "a": fs.ModeDir, "a/z": 0, "a/Y": 0, "a-b": 0, "é": 0, "_": 0,
		"link": fs.ModeSymlink, "locked": fs.ModeDir, "locked/x": 0,
		"skip": fs.ModeDir, "skip/x": 0,
	}, unreadable: map[string]bool{"locked": true}}
	var got []string
	tr.open = 1
	deep := walk(&memDir{t: tr}, func(rel string, e entry) walkAction {
		got = append(got, fmt.Sprintf("%s:%v:%d", rel, e.mode.Type(), e.size()))
		if rel == "skip" {
			return walkSkip
		}
		return walkOn
	})
	want := []string{
		"B:----------:1", "_:----------:1", "a:d---------:1", "a/Y:----------:3", "a/z:----------:3",
		"a-b:----------:3", "link:L---------:4", "locked:d---------:6", "skip:d---------:4", "é:----------:2",
	}
	if !slices.Equal(got, want) || deep {
		t.Errorf("walk visited\n%q (deep %v), want\n%q", got, deep, want)
	}
	if tr.open != 0 {
		t.Errorf("%d directories left open", tr.open)
	}
}

func TestWalkStopsAndBoundsDepth(t *testing.T) {
	tr := &memTree{mode: map[string]fs.FileMode{}}
	p := ""
	for range maxDepth + 3 {
		p = strings.TrimPrefix(p+"/d", "/")
		tr.mode[p] = fs.ModeDir
	}
	tr.open = 1
	var n int
	deep := walk(&memDir{t: tr}, func(rel string, e entry) walkAction { n++; return walkOn })
	if !deep || n != maxDepth || tr.open != 0 {
		t.Errorf("deep %v after %d entries, %d left open; want deep after %d", deep, n, tr.open, maxDepth)
	}
	tr.open = 1
	n = 0
	walk(&memDir{t: tr}, func(rel string, e entry) walkAction {
		if n++; strings.Count(rel, "/") == 9 {
			return walkStop
		}
		return walkOn
	})
	if n != 10 || tr.open != 0 {
		t.Errorf("stopped after %d entries with %d open; want 10, 0", n, tr.open)
	}
}
