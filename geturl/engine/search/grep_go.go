package search

import (
	"bytes"
	"context"
)

// grepGo is the portable engine.
func (s *Searcher) grepGo(ctx context.Context, t target, m *matcher, inc *includeSet, lim Limits) GrepResult {
	res := GrepResult{Engine: "go", Matches: []Match{}}
	var files int
	var total int64
	var buf []byte
	stop := func(reason string) bool {
		res.Truncated, res.Reason = true, reason
		return false
	}
	deep, err := walkFiles(ctx, t, inc, func(host, rel string, size int64) bool {
		if ctx.Err() != nil {
			return stop(ReasonTimeout)
		}
		if size > lim.MaxFileBytes {
			return true
		}
		if files++; files > lim.MaxFiles {
			return stop(ReasonMaxFiles)
		}
		if total += size; total > lim.MaxTotalBytes {
			return stop(ReasonMaxBytes)
		}
		data, b, ok := readText(host, size, lim.MaxFileBytes, buf)
		buf = b
		if !ok {
			return true
		}
		path := t.child(rel)
		full := false
		scanLines(data, m, func(num int, line []byte, at int) bool {
			if len(res.Matches) == lim.MaxResults {
				full = true
				return false
			}
			res.Matches = append(res.Matches, newMatch(path, num, line, at, lim.MaxLineBytes))
			return true
		})
		if full {
			return stop(ReasonMaxResults)
		}
		return true
	})
	if ctx.Err() != nil && !res.Truncated {
		stop(ReasonTimeout)
	}
	if deep && !res.Truncated {
		stop(ReasonMaxDepth)
	}
	_ = err // an unreadable start directory simply has no matches
	return res
}

// scanLines calls fn for each line of data that m matches, with its
// 1-based number, its bytes (line ending included) and the offset of the
// first match. When the pattern has a literal part, the buffer is searched
// for it as a whole and only the lines containing it are tried.
func scanLines(data []byte, m *matcher, fn func(num int, line []byte, at int) bool) {
	key := m.literal
	if key == nil {
		key = m.prefix
	}
	num, counted := 1, 0 // num is the number of the line starting at counted
	for off := 0; off < len(data); {
		start := off
		if key != nil {
			i := bytes.Index(data[off:], key)
			if i < 0 {
				return
			}
			start = off + bytes.LastIndexByte(data[off:off+i], '\n') + 1
		}
		end := len(data)
		if j := bytes.IndexByte(data[start:], '\n'); j >= 0 {
			end = start + j + 1
		}
		num += bytes.Count(data[counted:start], []byte{'\n'})
		counted = start
		line := data[start:end]
		if at := m.index(trimNL(line)); at >= 0 {
			if !fn(num, line, at) {
				return
			}
		}
		off = end
	}
}
