package aiui

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Trace history on disk: each intent-v1 turn that sends attachments gets a
// directory under its project's traces/ (up to the turn's 512 MiB of
// blobs). The spec keeps that history across reloads and restarts; these
// bounds keep it from filling the disk over months of use.
const (
	// keepTraceDirs is the prompt record's bound: an older trace belongs to
	// a prompt the record no longer holds.
	keepTraceDirs = 500
	// keepTraceBytes bounds one project's trace history; the newest trace
	// stays whatever its size.
	keepTraceBytes int64 = 2 << 30
)

// pruneTraces removes the oldest trace directories in tracesDir (by last
// change) beyond maxDirs, or once the newer ones hold maxBytes; current,
// the trace being written, is never removed. Anything that is not a
// directory is left alone, and so are errors: the history is best kept,
// not a reason to fail a turn.
func pruneTraces(tracesDir, current string, maxDirs int, maxBytes int64) (removed int) {
	entries, err := os.ReadDir(tracesDir)
	if err != nil || len(entries) <= 1 {
		return 0
	}
	type traceDir struct {
		name string
		mod  time.Time
		size int64
	}
	dirs := make([]traceDir, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() { // a symlink is not followed, only kept
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		dirs = append(dirs, traceDir{e.Name(), fi.ModTime(), dirSize(filepath.Join(tracesDir, e.Name()))})
	}
	// current first, then newest first
	slices.SortFunc(dirs, func(a, b traceDir) int {
		if (a.name == current) != (b.name == current) {
			if a.name == current {
				return -1
			}
			return 1
		}
		return cmp.Or(b.mod.Compare(a.mod), cmp.Compare(a.name, b.name))
	})
	var kept int
	var bytes int64
	full := false // once one goes, every older one goes too
	for _, d := range dirs {
		full = full || (d.name != current && (kept >= maxDirs || bytes+d.size > maxBytes))
		if !full {
			kept++
			bytes += d.size
			continue
		}
		if os.RemoveAll(filepath.Join(tracesDir, d.name)) == nil {
			removed++
		}
	}
	return removed
}

// dirSize is the size of the regular files directly in dir (a trace's
// blobs sit at its top level).
func dirSize(dir string) int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range entries {
		if e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
	}
	return n
}
