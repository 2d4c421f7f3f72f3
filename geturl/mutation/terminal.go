package mutation

import (
	"context"

	"github.com/hubdev/hub/geturl/kernel"
	"github.com/hubdev/hub/geturl/transport"
)

// Terminal runs /x commands (package terminal implements it).
type Terminal interface{}

// terminalSpec is /x.
var terminalSpec = &transport.Spec{
	Route: "/x",
	Params: append([]transport.Param{
		{Name: "command"},
		blobParam("blob"), countParam("count"),
		{Name: "cwd"},
		{Name: "bg", Kind: transport.Bool},
	}, journalControls()...),
	Raw: true, RawMeaning: "the shell command",
	Groups: []transport.Group{
		{Names: []string{"raw", "blob", "command"}, Code: transport.CodeConflictingContent, Required: true},
		callOrRun,
	},
	Requires: [][2]string{{"count", "blob"}},
}

// CodeTerminalUnavailable: no terminal engine is wired.
const CodeTerminalUnavailable = "terminal_unavailable"

func (h *Host) terminal(_ context.Context, c *kernel.Call) (any, *transport.Error) {
	if _, terr := prepare(c, "terminal"); terr != nil {
		return nil, terr
	}
	return nil, &transport.Error{Code: CodeTerminalUnavailable, Detail: "the terminal engine is not wired into this bridge"}
}
