package mutation

import (
	"context"

	"github.com/hubdev/hub/geturl/engine/filechange"
	"github.com/hubdev/hub/geturl/engine/intents"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// journalControls are the parameters every journaled route takes.
func journalControls() []transport.Param {
	return []transport.Param{transport.WaitParam(), transport.RunParam(), transport.CallParam()}
}

var callOrRun = transport.Group{Names: []string{"call", "run"}}

// WriteSpec is /w: a path and the whole content, by the raw tail, a staged
// blob (with its optional count) or content=.
var WriteSpec = &transport.Spec{
	Route: "/w",
	Params: append([]transport.Param{
		{Name: "path", Aliases: []string{"file"}, Required: true},
		{Name: "content", AllowEmpty: true},
		blobParam("blob"), countParam("count"),
	}, journalControls()...),
	Raw: true, RawMeaning: "the file's whole content",
	Groups: []transport.Group{
		{Names: []string{"raw", "blob", "content"}, Code: transport.CodeConflictingContent, Required: true},
		callOrRun,
	},
	Requires: [][2]string{{"count", "blob"}},
}

// EditSpec is /e: a path, the old text (old= or a staged oldBlob) and the
// new text (new=, a staged newBlob, or the raw tail).
var EditSpec = &transport.Spec{
	Route: "/e",
	Params: append([]transport.Param{
		{Name: "path", Aliases: []string{"file"}, Required: true},
		{Name: "old"},
		{Name: "new", AllowEmpty: true},
		blobParam("oldBlob"), countParam("oldCount"),
		blobParam("newBlob"), countParam("newCount"),
	}, journalControls()...),
	Raw: true, RawMeaning: "the new text",
	Groups: []transport.Group{
		{Names: []string{"old", "oldBlob"}, Code: transport.CodeConflictingContent, Required: true},
		{Names: []string{"new", "newBlob", "raw"}, Code: transport.CodeConflictingContent, Required: true},
		callOrRun,
	},
	Requires: [][2]string{{"oldCount", "oldBlob"}, {"newCount", "newBlob"}},
}

// PatchSpec is /a: the patch by the raw tail, a staged blob or patch=.
var PatchSpec = &transport.Spec{
	Route: "/a",
	Params: append([]transport.Param{
		{Name: "patch"},
		blobParam("blob"), countParam("count"),
	}, journalControls()...),
	Raw: true, RawMeaning: "the patch (*** Begin Patch … *** End Patch)",
	Groups: []transport.Group{
		{Names: []string{"raw", "blob", "patch"}, Code: transport.CodeConflictingContent, Required: true},
		callOrRun,
	},
	Requires: [][2]string{{"count", "blob"}},
}

// engine is the file engine for one call: the session's scope, ledger,
// edit tracker and authority, the process's project gate.
func (h *Host) engine(c *route.Call, st *State) *filechange.Engine {
	return &filechange.Engine{Scope: c.Session.Scope(), Ledger: st.Ledger, Gate: h.gate, Logs: h.logs, Edits: st.Edits,
		Allow: allowOf(c.Session.Permissions())}
}

// engineErr passes the engine's structured errors on.
func engineErr(err error) *fault.Error {
	if err == nil {
		return nil
	}
	if f, ok := err.(*fault.Error); ok {
		return f
	}
	return &fault.Error{Code: filechange.CodeWriteFailed, Detail: "the mutation failed", Retryable: true, Action: fault.ActionRetryLater}
}

// Write answers /w.
func (h *Host) Write(ctx context.Context, c *route.Call) (any, *transport.Error) {
	st, terr := prepare(c, "write")
	if terr != nil {
		return nil, terr
	}
	path, terr := resolvePath(c.Session, c.Args.Text("path"))
	if terr != nil {
		return nil, terr
	}
	text, terr := content(c, st, "blob", "count", "content", "raw")
	if terr != nil {
		return nil, terr
	}
	eng := h.engine(c, st)
	return h.journaled(ctx, c, st, intents.Intent{
		Tool: toolWrite, Args: map[string]any{"path": path, "content": text},
		Exec: func(ctx context.Context, run *intents.Run) (any, *fault.Error) {
			run.Running()
			res, err := eng.Write(ctx, path, text)
			return res, engineErr(err)
		},
	})
}

// Edit answers /e.
func (h *Host) Edit(ctx context.Context, c *route.Call) (any, *transport.Error) {
	st, terr := prepare(c, "write")
	if terr != nil {
		return nil, terr
	}
	path, terr := resolvePath(c.Session, c.Args.Text("path"))
	if terr != nil {
		return nil, terr
	}
	old, terr := content(c, st, "oldBlob", "oldCount", "old")
	if terr != nil {
		return nil, terr
	}
	repl, terr := content(c, st, "newBlob", "newCount", "new", "raw")
	if terr != nil {
		return nil, terr
	}
	eng := h.engine(c, st)
	return h.journaled(ctx, c, st, intents.Intent{
		Tool: toolEdit, Args: map[string]any{"path": path, "old": old, "new": repl},
		Exec: func(ctx context.Context, run *intents.Run) (any, *fault.Error) {
			run.Running()
			res, err := eng.Edit(ctx, path, old, repl)
			return res, engineErr(err)
		},
	})
}

// Patch answers /a. The patch's paths are resolved by the engine (every
// section, Move to included); the intent's identity is the patch text.
func (h *Host) Patch(ctx context.Context, c *route.Call) (any, *transport.Error) {
	st, terr := prepare(c, "write")
	if terr != nil {
		return nil, terr
	}
	text, terr := content(c, st, "blob", "count", "patch", "raw")
	if terr != nil {
		return nil, terr
	}
	eng := h.engine(c, st)
	return h.journaled(ctx, c, st, intents.Intent{
		Tool: toolPatch, Args: map[string]any{"patch": text},
		Exec: func(ctx context.Context, run *intents.Run) (any, *fault.Error) {
			run.Running()
			res, err := eng.ApplyPatch(ctx, text)
			return res, engineErr(err)
		},
	})
}
