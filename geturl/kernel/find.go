package kernel

import (
	"context"

	"github.com/hubdev/hub/geturl/engine/search"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// findSpec is /f: a directory (path=, default the project), a literal part
// of the file name (name=), and/or a literal text the file must contain
// (content=, alias query=, or the raw= tail). It always recurses;
// recursive=1 is accepted for agents that say so.
var findSpec = &transport.Spec{
	Route: "/f",
	Params: []transport.Param{
		{Name: "path"},
		{Name: "name", MaxLen: search.MaxPatternBytes},
		{Name: "content", Aliases: []string{"query"}, MaxLen: search.MaxPatternBytes},
		{Name: "recursive", Kind: transport.Enum, Values: []string{"1", "true"}},
	},
	Raw:        true,
	RawMeaning: "text the files must contain",
	Groups:     []transport.Group{{Names: []string{"content", "raw"}, Code: transport.CodeConflictingContent}},
}

type findAnswer struct {
	OK        bool               `json:"ok"`
	Truncated bool               `json:"truncated"`
	Reason    string             `json:"truncatedReason,omitempty"`
	Hint      string             `json:"hint,omitempty"`
	Count     int                `json:"count"`
	Entries   []search.FindEntry `json:"entries"`
}

// find answers /f.
func (k *Kernel) find(ctx context.Context, c *route.Call) (any, *transport.Error) {
	_, content, _ := c.Args.Content("content", "raw")
	req := search.FindRequest{Path: c.Args.Text("path"), Name: c.Args.Text("name"), Content: content}
	res, err := k.searcher(c).Find(ctx, req)
	if err != nil {
		return nil, k.searchFailure(c, req.Path, err)
	}
	a := findAnswer{OK: true, Truncated: res.Truncated, Reason: res.Reason, Count: len(res.Entries), Entries: res.Entries}
	if a.Truncated {
		a.Hint = "narrow the search with path= (a subdirectory) or a longer name="
	}
	return a, nil
}
