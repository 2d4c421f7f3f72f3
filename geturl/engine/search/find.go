package search

import (
	"bytes"
	"context"
	"io/fs"
	"path/filepath"
	"strings"
)

// FindRequest is one /f call.
type FindRequest struct {
	// Path is the directory to search; "" means the project root.
	Path string
	// Name is a literal, case-insensitive substring of the entry's name,
	// or of its path below Path when Name contains a slash. "" matches
	// every entry.
	Name string
	// Content, when set, keeps only text files containing it literally
	// (case-sensitive).
	Content string
}

// FindEntry is one found file or directory.
type FindEntry struct {
	Path string `json:"path"`
	Kind string `json:"kind"` // file, dir or symlink (not followed)
	Size int64  `json:"size,omitempty"`
	// Line is the first line containing FindRequest.Content.
	Line int `json:"line,omitempty"`
}

// FindResult is the answer to one Find, in depth-first name order.
type FindResult struct {
	Entries   []FindEntry `json:"entries"`
	Truncated bool        `json:"truncated"`
	Reason    string      `json:"truncatedReason,omitempty"`
}

// Find walks req.Path for entries whose name contains req.Name and, with
// req.Content, files that contain it.
func (s *Searcher) Find(ctx context.Context, req FindRequest) (FindResult, error) {
	lim := s.Limits.withDefaults()
	if strings.ContainsAny(req.Content, "\n") {
		return FindResult{}, ErrMultiline
	}
	t, err := s.resolve(req.Path)
	if err != nil {
		return FindResult{}, err
	}
	if !t.dir {
		return FindResult{}, ErrNotDirectory
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	name := strings.ToLower(req.Name)
	byPath := strings.Contains(name, "/")
	content := []byte(req.Content)
	res := FindResult{Entries: []FindEntry{}}
	var visited, files int
	var total int64
	var buf []byte
	stop := func(reason string) walkAction {
		res.Truncated, res.Reason = true, reason
		return walkStop
	}
	deep, _ := walkTree(t.host, func(rel string, d entry) walkAction {
		if ctx.Err() != nil {
			return stop(ReasonTimeout)
		}
		if visited++; visited > lim.MaxEntries {
			return stop(ReasonMaxEntries)
		}
		subject := strings.ToLower(d.name)
		if byPath {
			subject = "/" + strings.ToLower(rel)
		}
		skip := d.mode.IsDir() && skipSet[d.name]
		next := walkOn
		if skip {
			next = walkSkip
		}
		if name != "" && !strings.Contains(subject, name) {
			return next
		}
		e := FindEntry{Path: t.child(rel), Kind: kindName(d.mode)}
		switch {
		case len(content) > 0:
			size := d.size()
			if !d.mode.IsRegular() || size < 0 || size > lim.MaxFileBytes {
				break
			}
			if files++; files > lim.MaxFiles {
				return stop(ReasonMaxFiles)
			}
			if total += size; total > lim.MaxTotalBytes {
				return stop(ReasonMaxBytes)
			}
			data, b, ok := readText(filepath.Join(t.host, rel), size, lim.MaxFileBytes, buf)
			buf = b
			if i := bytes.Index(data, content); ok && i >= 0 {
				e.Size, e.Line = size, 1+bytes.Count(data[:i], []byte{'\n'})
				if !add(&res, e, lim) {
					return stop(ReasonMaxResults)
				}
			}
		default:
			if d.mode.IsRegular() {
				e.Size = max(d.size(), 0)
			}
			if !add(&res, e, lim) {
				return stop(ReasonMaxResults)
			}
		}
		return next
	})
	if deep && !res.Truncated {
		stop(ReasonMaxDepth)
	}
	return res, nil
}

func add(res *FindResult, e FindEntry, lim Limits) bool {
	if len(res.Entries) == lim.MaxResults {
		return false
	}
	res.Entries = append(res.Entries, e)
	return true
}

func kindName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "other"
}
