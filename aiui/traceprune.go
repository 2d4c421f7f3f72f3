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

// Across projects: the project is named by the source root a page's
// hello gives, so a page naming a new root for each turn would get a
// fresh per-project budget every time. These bound every project's
// history together.
const (
	keepAllTraceDirs        = 2000
	keepAllTraceBytes int64 = 4 << 30
)

// traceDir is one trace directory found on disk.
type traceDir struct {
	path string
	mod  time.Time
	size int64
}

// pruneTraces removes the oldest trace directories in tracesDir (by last
// change) beyond maxDirs, or once the newer ones hold maxBytes; the
// traces named in open (by id: the one being written, and every turn of
// this backend still open) are never removed. Anything that is not a
// directory is left alone, and so are errors: the history is best kept,
// not a reason to fail a turn.
func pruneTraces(tracesDir string, open map[string]bool, maxDirs int, maxBytes int64) (removed int) {
	return prune(listTraces(tracesDir, nil), open, maxDirs, maxBytes)
}

// pruneAllTraces applies the same rule to the traces of every project
// under projectsDir (…/aiui/projects) together, then removes the project
// directories that are left empty.
func pruneAllTraces(projectsDir string, open map[string]bool, maxDirs int, maxBytes int64) (removed int) {
	projects, err := os.ReadDir(projectsDir)
	if err != nil {
		return 0
	}
	var all []traceDir
	for _, p := range projects {
		if p.IsDir() {
			all = listTraces(filepath.Join(projectsDir, p.Name(), "traces"), all)
		}
	}
	if removed = prune(all, open, maxDirs, maxBytes); removed > 0 {
		for _, p := range projects {
			// Remove only removes an empty directory: anything else stays.
			os.Remove(filepath.Join(projectsDir, p.Name(), "traces"))
			os.Remove(filepath.Join(projectsDir, p.Name()))
		}
	}
	return removed
}

// listTraces appends the directories directly in tracesDir to dirs.
func listTraces(tracesDir string, dirs []traceDir) []traceDir {
	entries, err := os.ReadDir(tracesDir)
	if err != nil {
		return dirs
	}
	for _, e := range entries {
		if !e.IsDir() { // a symlink is not followed, only kept
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		p := filepath.Join(tracesDir, e.Name())
		dirs = append(dirs, traceDir{p, fi.ModTime(), dirSize(p)})
	}
	return dirs
}

// prune keeps the open traces and then the newest dirs while within
// maxDirs and maxBytes; from the first that does not fit, every older one
// goes.
func prune(dirs []traceDir, open map[string]bool, maxDirs int, maxBytes int64) (removed int) {
	if len(dirs) <= 1 {
		return 0
	}
	isOpen := func(d traceDir) bool { return open[filepath.Base(d.path)] }
	// open ones first, then newest first
	slices.SortFunc(dirs, func(a, b traceDir) int {
		if isOpen(a) != isOpen(b) {
			if isOpen(a) {
				return -1
			}
			return 1
		}
		return cmp.Or(b.mod.Compare(a.mod), cmp.Compare(a.path, b.path))
	})
	var kept int
	var bytes int64
	full := false // once one goes, every older one goes too
	for _, d := range dirs {
		if isOpen(d) {
			kept++
			bytes += d.size
			continue
		}
		full = full || kept >= maxDirs || bytes+d.size > maxBytes
		if !full {
			kept++
			bytes += d.size
			continue
		}
		if os.RemoveAll(d.path) == nil {
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
