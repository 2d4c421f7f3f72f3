package kernel

import (
	"context"
	"errors"

	"github.com/hubdev/hub/geturl/engine/search"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// grepSpec is /g: one file or directory (path=, default the project), the
// text (raw= tail, or pattern= with aliases grep= and query=), literal
// unless regex=1|true, include= globs, ignoreCase=.
var grepSpec = &transport.Spec{
	Route: "/g",
	Params: []transport.Param{
		{Name: "path"},
		{Name: "pattern", Aliases: []string{"grep", "query"}, MaxLen: search.MaxPatternBytes},
		{Name: "regex", Kind: transport.Bool},
		{Name: "include", Repeat: search.MaxGlobs, MaxLen: search.MaxGlobBytes},
		{Name: "ignoreCase", Kind: transport.Bool},
	},
	Raw:        true,
	RawMeaning: "the search text",
	Groups:     []transport.Group{{Names: []string{"pattern", "raw"}, Code: transport.CodeConflictingContent, Required: true}},
}

type grepAnswer struct {
	OK               bool           `json:"ok"`
	Truncated        bool           `json:"truncated"`
	Reason           string         `json:"truncatedReason,omitempty"`
	Hint             string         `json:"hint,omitempty"`
	Mode             string         `json:"mode"`
	Engine           string         `json:"engine"`
	Count            int            `json:"count"`
	FilesWithMatches int            `json:"filesWithMatches"`
	Matches          []search.Match `json:"matches"`
}

// grep answers /g. A pattern that is not a valid regular expression is
// refused with the exact URL of the same search done literally.
func (k *Kernel) grep(ctx context.Context, c *route.Call) (any, *transport.Error) {
	via, pattern, _ := c.Args.Content("pattern", "raw")
	regex, _ := c.Args.Bool("regex")
	icase, _ := c.Args.Bool("ignoreCase")
	req := search.GrepRequest{Path: c.Args.Text("path"), Pattern: pattern, Regex: regex, IgnoreCase: icase, Include: c.Args.Texts("include")}
	res, err := k.searcher(c).Grep(ctx, req)
	if err != nil {
		var re *search.RegexError
		if errors.As(err, &re) {
			e := &transport.Error{
				Code: CodeInvalidRegex, Detail: re.Msg, Retryable: true, Action: fault.ActionFetchRepair,
				Hint:   "the repair URL searches for the same text literally; escape the pattern to keep it a regex",
				Repair: c.URL("/g", literalGrep(c, via, pattern)),
			}
			if !transport.Fits(e.Repair) { // the pattern re-encoded is longer than the agent wrote it
				e.Repair, e.Action = "", fault.ActionCorrectRequest
				e.Hint = "escape the pattern to keep it a regex, or leave regex= out to search for it literally"
			}
			return nil, e
		}
		return nil, k.searchFailure(c, req.Path, err)
	}
	a := grepAnswer{OK: true, Truncated: res.Truncated, Reason: res.Reason, Mode: "literal", Engine: res.Engine,
		Count: len(res.Matches), FilesWithMatches: res.FilesWithMatches, Matches: res.Matches}
	if regex {
		a.Mode = "regex"
	}
	if a.Truncated {
		a.Hint = "narrow the search with path=, include= or a longer pattern"
	}
	return a, nil
}

// literalGrep rebuilds the call without regex=, keeping the text on the
// transport the agent used.
func literalGrep(c *route.Call, via, pattern string) *transport.Query {
	var q transport.Query
	if c.Args.Has("path") {
		q.Add("path", c.Args.Text("path"))
	}
	for _, g := range c.Args.Texts("include") {
		q.Add("include", g)
	}
	if c.Args.Has("ignoreCase") {
		q.Add("ignoreCase", c.Args.Text("ignoreCase"))
	}
	if via == "raw" {
		q.SetRaw(pattern)
	} else {
		q.Add("pattern", pattern)
	}
	return &q
}
