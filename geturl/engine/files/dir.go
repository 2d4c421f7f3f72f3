package files

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// entryCost estimates the wire bytes of one listing entry beyond its name
// ({"name":"","kind":"file","size":12345},).
const entryCost = 40

// loadDir reads and sorts a directory's names and keeps the requested ones.
func (r *Reader) loadDir(it *item, f *os.File, t Target, lim Limits) {
	ents, err := f.ReadDir(lim.MaxDirNames + 1)
	if err != nil && err != io.EOF {
		it.fail(it.res.Path, err)
		return
	}
	if len(ents) > lim.MaxDirNames {
		ents, it.res.DirPartial = ents[:lim.MaxDirNames], true
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	it.res.Size = 0
	it.res.TotalLines = len(ents)
	start := max(t.Start, 1)
	if start > len(ents) && len(ents) > 0 {
		total := it.res.TotalLines
		it.fail(it.res.Path, errPastEnd)
		it.res.TotalLines = total
		return
	}
	end := len(ents)
	if t.End > 0 {
		end = min(end, t.End)
	}
	if len(ents) > 0 {
		ents = ents[start-1 : end]
	}
	it.endLine = end
	ents = ents[:min(len(ents), lim.MaxDirEntries)]
	it.entries = make([]Entry, 0, len(ents))
	for _, e := range ents {
		it.entries = append(it.entries, Entry{Name: e.Name(), Kind: kindOf(e.Type())})
		it.demand += len(e.Name()) + entryCost
	}
}

// cutDir keeps the entries that fit alloc and stats them for their size.
func (it *item) cutDir(alloc, start int) {
	r := &it.res
	start = max(start, 1)
	n, used := 0, 0
	for _, e := range it.entries {
		if used+len(e.Name)+entryCost > alloc {
			break
		}
		used += len(e.Name) + entryCost
		n++
	}
	r.Entries = it.entries[:n]
	for i := range r.Entries {
		if r.Entries[i].Kind != KindFile {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(r.Host, r.Entries[i].Name)); err == nil {
			r.Entries[i].Size = fi.Size()
		}
	}
	if n > 0 {
		r.StartLine, r.EndLine = start, start+n-1
	}
	r.Complete = r.EndLine == it.endLine && !r.DirPartial
	if r.EndLine != it.endLine {
		r.Truncated, r.NextStartLine = true, start+n
	}
	if r.Entries == nil {
		r.Entries = []Entry{}
	}
}

func kindOf(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return KindFile
	case m.IsDir():
		return KindDir
	case m&fs.ModeSymlink != 0:
		return KindSymlink
	}
	return KindOther
}
