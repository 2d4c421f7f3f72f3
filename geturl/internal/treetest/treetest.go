// Package treetest records a directory tree (kind, mode, bytes, link
// targets) so a test can prove that an operation changed nothing in it —
// the project after a refused mutation, the outside of a sandbox after an
// escape attempt.
package treetest

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Snapshot records every entry under dir.
func Snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		v := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		out[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Same reports every entry that changed, appeared or disappeared between
// two snapshots, prefixed by what.
func Same(t testing.TB, what string, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if a, ok := after[k]; !ok {
			t.Errorf("%s: %s disappeared (was %q)", what, k, v)
		} else if a != v {
			t.Errorf("%s: %s changed: %q -> %q", what, k, v, a)
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s: %s appeared: %q", what, k, v)
		}
	}
}
