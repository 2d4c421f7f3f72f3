package stitchslop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hubdev/hub/adapters"
)

// The bridge as adapters.ToolBridge: the attached tab's tools to another
// adapter of the hub (geturl's plugin=stitchslop), called exactly as POST
// /call calls them: each command goes to the tab at once, beside any
// other caller's.

var _ adapters.ToolBridge = (*Server)(nil)

const (
	// codePageError is a page's ok:false envelope that names no error.
	codePageError = "page_error"
	codeUnknown   = "unknown_tool"
)

// noPage is the offline error in words for any agent (noPageText speaks
// to MCP and shell agents, which can wait for the tab).
func noPage(port int) error {
	return adapters.NoPage(fmt.Sprintf("no Stitch Slop tab is connected to the bridge (port %d); the page polls for it and attaches on its own", port),
		"retry the same URL shortly; if the tab never attaches, ask the user whether the Allow agent connections switch is on in their Stitch Slop tab")
}

// BridgeTools implements adapters.ToolBridge: the tab's sanitised tool
// list, each classified by adapters.ReadOnlyTool (the tool's MCP
// readOnlyHint, else its name).
func (s *Server) BridgeTools() ([]adapters.BridgeTool, error) {
	if rb := s.followed(); rb != nil {
		return rb.BridgeTools()
	}
	tools, ok := s.Tools()
	if !ok {
		return nil, noPage(s.Port())
	}
	return asBridgeTools(tools), nil
}

func asBridgeTools(tools []PageTool) []adapters.BridgeTool {
	out := make([]adapters.BridgeTool, len(tools))
	for i, t := range tools {
		desc := t.Description
		if desc == "" {
			desc = t.Title
		}
		out[i] = adapters.BridgeTool{Name: t.Name, Description: desc, InputSchema: t.InputSchema, Read: adapters.ReadOnlyTool(t.Name, t.Annotations)}
	}
	return out
}

// BridgeClassify implements adapters.ToolBridge. A listed tool is
// classified as BridgeTools says. A name the tab does not list is still
// taken, since POST /call sends the tab any command and the page owns its
// registry; with no annotations to go by, only the name rule can make it
// a read.
func (s *Server) BridgeClassify(tool string, args json.RawMessage) (bool, error) {
	if rb := s.followed(); rb != nil {
		return rb.BridgeClassify(tool, args)
	}
	tools, ok := s.Tools()
	if !ok {
		return false, noPage(s.Port())
	}
	return classify(tools, tool, args)
}

// classify is BridgeClassify once the tab's tools are known.
func classify(tools []PageTool, tool string, args json.RawMessage) (bool, error) {
	if !toolNameRE().MatchString(tool) || isBridgeTool(tool) {
		return false, &adapters.ToolError{Code: codeUnknown, Message: fmt.Sprintf("%q is not a command the tab can have (names match %s)", clip(tool, 64), toolNameRE()),
			Hint: "list the tab's tools first"}
	}
	if !isJSONObject(args) {
		return false, &adapters.ToolError{Code: "invalid_arguments", Message: "the arguments must be a JSON object"}
	}
	for _, t := range tools {
		if t.Name == tool {
			return adapters.ReadOnlyTool(t.Name, t.Annotations), nil
		}
	}
	return adapters.ReadOnlyTool(tool, nil), nil
}

// BridgeCall implements adapters.ToolBridge: the command goes to the tab
// through Call, as POST /call sends it, and the answer is the tab's
// envelope without the transport id. An ok:false envelope is a
// *adapters.ToolError with the envelope's error code (page_error when it
// has none); the bridge's own "uncertain" (no answer, or the tab left
// mid-call: the command may have run) is retryable, a page's refusal is
// not.
func (s *Server) BridgeCall(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	if rb := s.followed(); rb != nil {
		return rb.BridgeCall(ctx, tool, args)
	}
	s.agentActivity()
	out, err := s.Call(withAgent(ctx, "geturl"), tool, args)
	switch {
	case errors.Is(err, ErrNoPage):
		return nil, noPage(s.Port())
	case err != nil:
		return nil, &adapters.ToolError{Code: "invalid_arguments", Message: err.Error()}
	}
	return envelopeAnswer(out)
}

// envelopeAnswer is the tab's envelope without the transport id, or its
// ok:false as a ToolError.
func envelopeAnswer(out []byte) (json.RawMessage, error) {
	var env map[string]json.RawMessage
	if json.Unmarshal(out, &env) != nil || env == nil {
		return nil, &adapters.ToolError{Code: codePageError, Message: "the tab answered something that is not a JSON object"}
	}
	delete(env, "id")
	var ok bool
	json.Unmarshal(env["ok"], &ok)
	if !ok {
		return nil, envelopeError(env)
	}
	return json.Marshal(env)
}

const (
	hintUncertain = "the command may or may not have run: describe the scene (scene.describe) before retrying"
	hintStopping  = "the command was not sent (the bridge was stopping): retry it once the bridge runs again"
)

// envelopeError is an ok:false envelope as a ToolError.
func envelopeError(env map[string]json.RawMessage) error {
	var code, msg string
	json.Unmarshal(env["error"], &code)
	json.Unmarshal(env["message"], &msg)
	if code == "" {
		code = codePageError
	}
	if msg == "" {
		b, _ := json.Marshal(env)
		msg = string(b)
	}
	te := &adapters.ToolError{Code: code, Message: msg}
	switch code {
	case "uncertain":
		te.Retryable = true
		te.Hint = hintUncertain
	case "stopping": // never sent: nothing ran
		te.Retryable = true
		te.Hint = hintStopping
	}
	return te
}
