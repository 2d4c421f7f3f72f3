package stitchslop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/hub/mcpserver"
)

// bridgeTools are the MCP tools the bridge itself provides: §3.3 and §3.4,
// wait_for_connection and nothing else (connection state and pairing are
// the shell's: `hub stitchslop status` and `pair`).
var bridgeTools = []*mcp.Tool{
	{
		Name: toolWait,
		Description: "Block until the user's Stitch Slop tab attaches (it polls and connects on its own), then return a greeting " +
			"with the live scene (scene.describe). Returns at once when already connected. A timeout is a normal result: call again. " +
			"By default a face shares a bridge already running for the site; ownBridge: true opens one of its own on the next free port, for a second tab.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"timeoutSeconds":{"type":"number","description":"how long to wait, default 90, at most 120"},` +
			`"ownBridge":{"type":"boolean","description":"run a bridge of this face's own on the next free port of 8787-8790 (for a second tab) instead of sharing the running one"}}}`),
	},
}

// toolResult is a tools/call result as §3.5 shapes it: content blocks as
// JSON objects, isError always said.
type toolResult struct {
	Content []map[string]any `json:"content"`
	IsError bool             `json:"isError"`
}

func textResult(text string, isError bool) toolResult {
	return toolResult{Content: []map[string]any{{"type": "text", "text": text}}, IsError: isError}
}

// sdk converts r for the SDK; an image block becomes the shared layer's,
// which puts the same base64 on the wire.
func (r toolResult) sdk() *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: r.IsError, Content: make([]mcp.Content, 0, len(r.Content))}
	for _, b := range r.Content {
		switch b["type"] {
		case "text":
			text, _ := b["text"].(string)
			out.Content = append(out.Content, &mcp.TextContent{Text: text})
		case "image":
			mime, _ := b["mimeType"].(string)
			data, _ := b["data"].(string)
			if img, ok := mcpserver.ImageFromDataURL("data:" + mime + ";base64," + data); ok {
				out.Content = append(out.Content, img)
			}
		}
	}
	return out
}

// callTool runs wait_for_connection; any other name goes to the page.
func (f *face) callTool(ctx context.Context, name string, args json.RawMessage) toolResult {
	if name == toolWait {
		return f.waitTool(ctx, args)
	}
	return f.pageCall(ctx, name, args)
}

// pageCall translates a tools/call into a page command (§3.2: name →
// command, arguments → args) and its answer into a result (§3.5).
func (f *face) pageCall(ctx context.Context, name string, args json.RawMessage) toolResult {
	env, err := f.b.Call(withAgent(ctx, f.id), name, args)
	if err != nil {
		return f.callFailed(name, err)
	}
	return envelopeResult(env)
}

// callFailed says why a page call did not happen, or, for a bridge lost
// once it had the call (killed or crashed mid-call), that the tab may
// have run it: the bridge's own "uncertain", so no agent retries a
// command that ran.
func (f *face) callFailed(command string, err error) toolResult {
	switch {
	case errors.Is(err, ErrNoPage):
		return textResult(noPageText(f.b.Port(), f.waitName()), true)
	case errors.Is(err, ErrBridgeGone) && !unsent(err):
		return envelopeResult(uncertain(command, "the bridge went away before it answered ("+err.Error()+")"))
	}
	return textResult("The call was not sent: "+err.Error(), true)
}

// greetingFloor is the least time the greeting's scene.describe gets, so a
// short timeoutSeconds on an attached tab still describes the scene.
const greetingFloor = 5 * time.Second

// waitTool is wait_for_connection (§3.4). timeoutSeconds bounds the whole
// call, the greeting's scene.describe included (at least greetingFloor):
// an attached tab that does not answer must not hold it for the 60 s call
// timeout.
func (f *face) waitTool(ctx context.Context, args json.RawMessage) toolResult {
	secs := waitSeconds(args)
	ownNote := ""
	if wantsOwnBridge(args) {
		if f.own == nil {
			ownNote = fmt.Sprintf(" (ownBridge: this face's bridge, on port %d, is its own already.)", f.b.Port())
		} else {
			// Its message is the face's report from now on (faceNote).
			if _, err := f.own(ctx); err != nil {
				return textResult("ownBridge: "+err.Error(), true)
			}
		}
	}
	deadline := time.Now().Add(time.Duration(secs * float64(time.Second)))
	_, already := f.b.Tools()
	if !f.b.waitAttached(ctx, time.Until(deadline)) {
		if sb, ok := f.b.(*switchBridge); ok {
			if cur, why, _ := sb.current(); cur == nil {
				// The bridge went during the wait (its hub stopped) and none
				// came back: no tab could attach, so the browser is not why.
				return textResult(fmt.Sprintf("No Stitch Slop tab attached in %gs: there is no bridge for it to attach to now (%s). "+
					"Call %s again once a bridge runs.", secs, why, f.waitName()), true)
			}
		}
		r := f.b.Report()
		text := fmt.Sprintf("Still waiting: no Stitch Slop tab has attached to this bridge (port %d) in %gs. "+
			"The page polls and attaches on its own, so call %s again. ", r.Port, secs, f.waitName())
		if r.Attempts == 0 {
			text += "No browser has tried to connect yet. If waiting again does not help, ask the user whether their Allow agent connections switch is on " +
				"(and, if it is, to check the browser console for a Content-Security-Policy block)."
		} else if len(r.Refusals) > 0 {
			text += fmt.Sprintf("The browser tried %d times and was refused (most recent reason: %s); `hub stitchslop status` in a shell lists every refusal.",
				r.Attempts, r.Refusals[0].Reason)
		}
		return textResult(text+faceNote(r)+ownNote, false)
	}
	greeting := fmt.Sprintf("Connected: the Stitch Slop tab at %s is attached to this bridge (port %d).", f.b.Origin(), f.b.Port())
	if already {
		greeting = fmt.Sprintf("Already connected: the Stitch Slop tab at %s is attached to this bridge (port %d).", f.b.Origin(), f.b.Port())
	}
	greeting += faceNote(f.b.Report()) + ownNote
	dctx, cancel := context.WithDeadline(ctx, later(deadline, time.Now().Add(greetingFloor)))
	defer cancel()
	env, err := f.b.Call(withAgent(dctx, f.id), "scene.describe", nil)
	if err != nil {
		return textResult(greeting+"\n\nscene.describe could not run: "+err.Error(), false)
	}
	res := envelopeResult(env)
	text, _ := res.Content[0]["text"].(string)
	res.Content[0]["text"] = greeting + "\n\nscene.describe answered:\n" + text
	res.IsError = false
	return res
}

// waitSeconds reads timeoutSeconds: default 90, capped at 120; anything
// that is not a non-negative number means the default.
func waitSeconds(args json.RawMessage) float64 {
	var p struct {
		TimeoutSeconds *float64 `json:"timeoutSeconds"`
	}
	if json.Unmarshal(args, &p) != nil || p.TimeoutSeconds == nil || *p.TimeoutSeconds < 0 {
		return DefaultWaitSeconds
	}
	return min(*p.TimeoutSeconds, MaxWaitSeconds)
}

// wantsOwnBridge reads ownBridge (wait_for_connection).
func wantsOwnBridge(args json.RawMessage) bool {
	var p struct {
		OwnBridge bool `json:"ownBridge"`
	}
	return json.Unmarshal(args, &p) == nil && p.OwnBridge
}

// envelopeResult renders a page envelope as MCP content (§3.5): one text
// block with the envelope as JSON minus the transport id, led by its `say`
// line; a dataUrl becomes an image block and leaves the text; ok:false is
// isError.
func envelopeResult(env []byte) toolResult {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(env, &m); err != nil || m == nil {
		return textResult("The page answered with something that is not a JSON object: "+clip(string(env), 200), true)
	}
	delete(m, "id")
	isError := string(m["ok"]) == "false"
	var image map[string]any
	if raw, ok := m["dataUrl"]; ok {
		var du string
		if json.Unmarshal(raw, &du) == nil {
			if mime, data, ok := parseDataURL(du); ok {
				image = map[string]any{"type": "image", "data": data, "mimeType": mime}
				delete(m, "dataUrl")
			}
		}
	}
	body, _ := json.Marshal(m)
	text := string(body)
	var say string
	if raw, ok := m["say"]; ok && json.Unmarshal(raw, &say) == nil && strings.TrimSpace(say) != "" {
		text = say + "\n" + text
	}
	res := textResult(text, isError)
	if image != nil {
		res.Content = append(res.Content, image)
	}
	return res
}

// parseDataURL splits data:<mime>;base64,<data> by the shared layer's
// rules, returning the base64 text as it came.
func parseDataURL(s string) (mime, data string, ok bool) {
	if mime, _, ok = mcpserver.ParseDataURL(s); !ok {
		return "", "", false
	}
	_, data, _ = strings.Cut(s, ";base64,")
	return mime, data, true
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// faceNote says, for a face that follows another process's bridge or took
// one over, which bridge it serves (" " and the message, or "").
func faceNote(r StatusReport) string {
	if r.Face == nil || r.Face.Message == "" {
		return ""
	}
	return " " + r.Face.Message
}
