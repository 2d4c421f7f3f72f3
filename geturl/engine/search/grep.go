package search

import (
	"context"
	"os"
	"os/exec"
	"path"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

// Searcher runs /f and /g inside one scope. It is safe for concurrent use.
type Searcher struct {
	Scope  *sandbox.Scope
	Limits Limits
	// RG is the ripgrep executable grep runs; "" means the Go engine.
	RG string
}

// NewSearcher returns a Searcher with the default limits that uses rg when
// it is on PATH.
func NewSearcher(scope *sandbox.Scope) *Searcher {
	rg, err := exec.LookPath("rg")
	if err != nil {
		rg = ""
	}
	return &Searcher{Scope: scope, RG: rg}
}

// GrepRequest is one /g call.
type GrepRequest struct {
	// Path is one file or one directory; "" means the project root.
	Path string
	// Pattern is a literal string, or with Regex a Go RE2 expression.
	Pattern    string
	Regex      bool
	IgnoreCase bool
	// Include restricts a directory search to files matching any of
	// these globs (see includeSet). A single-file search ignores them.
	Include []string
}

// GrepResult is the answer to one Grep, matches in path order then line
// order.
type GrepResult struct {
	Matches []Match `json:"matches"`
	// FilesWithMatches counts the distinct files in Matches.
	FilesWithMatches int `json:"filesWithMatches"`
	// Truncated is set when a limit ended the search early; Reason says
	// which (ReasonMaxResults, ReasonMaxFiles, ReasonMaxBytes,
	// ReasonTimeout, ReasonMaxDepth).
	Truncated bool   `json:"truncated"`
	Reason    string `json:"truncatedReason,omitempty"`
	// Engine is "rg" or "go".
	Engine string `json:"engine"`
}

// target is the resolved path of a search.
type target struct {
	host, virtual string
	dir           bool
}

// child returns the virtual path of rel (slash-separated) under t.
func (t target) child(rel string) string {
	if !t.dir || rel == "" {
		return t.virtual
	}
	return path.Join(t.virtual, rel)
}

// Grep searches req.Path for req.Pattern.
func (s *Searcher) Grep(ctx context.Context, req GrepRequest) (GrepResult, error) {
	lim := s.Limits.withDefaults()
	m, err := compilePattern(req.Pattern, req.Regex, req.IgnoreCase)
	if err != nil {
		return GrepResult{}, err
	}
	inc, err := compileIncludes(req.Include)
	if err != nil {
		return GrepResult{}, err
	}
	t, err := s.resolve(req.Path)
	if err != nil {
		return GrepResult{}, err
	}
	if !t.dir {
		inc = nil
		fi, err := os.Stat(t.host)
		if err != nil {
			return GrepResult{}, ErrNotSearchable
		}
		if fi.Size() > lim.MaxFileBytes {
			return GrepResult{}, ErrFileTooLarge
		}
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	var res GrepResult
	ran := false
	if s.RG != "" && m.rgArgs != nil {
		res, ran = s.grepRG(ctx, t, m, req.Include, lim)
	}
	if !ran {
		res = s.grepGo(ctx, t, m, inc, lim)
	}
	seen := ""
	for _, mt := range res.Matches {
		if mt.Path != seen {
			res.FilesWithMatches++
			seen = mt.Path
		}
	}
	return res, nil
}

// resolve resolves a search path, which must be a directory or a regular
// file inside the scope.
func (s *Searcher) resolve(p string) (target, error) {
	if p == "" {
		p = "."
	}
	r, err := s.Scope.ResolveExisting(p)
	if err != nil {
		return target{}, err
	}
	fi, err := os.Stat(r.Host)
	if err != nil || !(fi.IsDir() || fi.Mode().IsRegular()) {
		return target{}, ErrNotSearchable
	}
	return target{host: r.Host, virtual: r.Virtual, dir: fi.IsDir()}, nil
}
