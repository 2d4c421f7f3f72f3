package search

import (
	"errors"
	"time"
)

// Limits bound one search. The zero value of a field means its default.
type Limits struct {
	// MaxResults is the most matches (grep) or entries (find) returned.
	MaxResults int
	// MaxLineBytes is the longest line text returned; longer lines are
	// clipped around the first match.
	MaxLineBytes int
	// MaxFiles is the most files one search reads (the Go engine and find;
	// rg is bounded by Timeout instead).
	MaxFiles int
	// MaxEntries is the most directory entries find visits.
	MaxEntries int
	// MaxFileBytes skips larger files (rg: --max-filesize).
	MaxFileBytes int64
	// MaxTotalBytes is the most file bytes one search reads (Go engine and
	// find).
	MaxTotalBytes int64
	// Timeout ends a search early with what it found so far.
	Timeout time.Duration
}

// DefaultLimits are generous enough for a large monorepo and small enough
// that one search answer stays readable through a URL reader.
var DefaultLimits = Limits{
	MaxResults:    200,
	MaxLineBytes:  300,
	MaxFiles:      50_000,
	MaxEntries:    200_000,
	MaxFileBytes:  8 << 20,
	MaxTotalBytes: 512 << 20,
	Timeout:       10 * time.Second,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	set := func(dst *int, v int) {
		if v > 0 {
			*dst = v
		}
	}
	set(&d.MaxResults, l.MaxResults)
	set(&d.MaxLineBytes, l.MaxLineBytes)
	set(&d.MaxFiles, l.MaxFiles)
	set(&d.MaxEntries, l.MaxEntries)
	if l.MaxFileBytes > 0 {
		d.MaxFileBytes = l.MaxFileBytes
	}
	if l.MaxTotalBytes > 0 {
		d.MaxTotalBytes = l.MaxTotalBytes
	}
	if l.Timeout > 0 {
		d.Timeout = l.Timeout
	}
	return d
}

// Reasons a result is truncated.
const (
	ReasonMaxResults = "max_results"
	ReasonMaxFiles   = "max_files"
	ReasonMaxEntries = "max_entries"
	ReasonMaxBytes   = "max_bytes"
	ReasonTimeout    = "timeout"
	// ReasonMaxDepth: directories deeper than 256 levels were not entered
	// (search from a deeper path to reach them).
	ReasonMaxDepth = "max_depth"
)

// Errors for a search that cannot run. Path errors are sandbox errors.
var (
	ErrBadRegex      = errors.New("invalid regular expression")
	ErrEmptyPattern  = errors.New("search pattern is empty")
	ErrMultiline     = errors.New("grep matches within one line; the pattern contains a line break")
	ErrBadGlob       = errors.New("invalid include glob")
	ErrFileTooLarge  = errors.New("file is too large to search")
	ErrNotSearchable = errors.New("path is not a regular file or directory")
	ErrNotDirectory  = errors.New("find searches a directory; the path is a file")
)

// RegexError is a pattern that does not compile. Msg is the parser's
// message (it quotes only the agent's own pattern).
type RegexError struct {
	Msg string
}

func (e *RegexError) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrBadRegex) true.
func (e *RegexError) Is(target error) bool { return target == ErrBadRegex }

// GlobError is an include glob that cannot be used.
type GlobError struct {
	Glob, Msg string
}

func (e *GlobError) Error() string { return "include glob " + e.Glob + ": " + e.Msg }

// Is makes errors.Is(err, ErrBadGlob) true.
func (e *GlobError) Is(target error) bool { return target == ErrBadGlob }
