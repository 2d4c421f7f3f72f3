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

// bridgeTools are the MCP tools the bridge itself provides: §3.4's
// wait_for_connection, and what the app's own plugin gives its users
// besides (issue 28): pair, connection_status, and files by path in
// (call_with_file) and out (call_to_files); and call, a generic call for
// clients whose tool list is frozen (issue 30).
var bridgeTools = []*mcp.Tool{
	{
		Name: toolWait,
		Description: "Block until the user's Stitch Slop tab attaches (it polls and connects on its own), then return a greeting " +
			"with the live scene (scene.describe). Returns at once when already connected. A timeout is a normal result: call again. " +
			"By default a face shares a bridge already running for the site; ownBridge: true opens one of its own on the next free port, for a second tab.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"timeoutSeconds":{"type":"number","description":"how long to wait, default 90, at most 120"},` +
			`"ownBridge":{"type":"boolean","description":"run a bridge of this face's own on the next free port of 8787-8790 (for a second tab) instead of sharing the running one"}}}`),
	},
	{
		Name: toolPair,
		Description: "Arm the one-time token the user's Stitch Slop panel shows on the bridge, so their tab pairs with it the next time it connects " +
			"(it polls on its own; then call wait_for_connection). The token is spent once the tab pairs; the tab keeps a pairing for next time. " +
			"origin is the tab's site when it is not the bridge's own (a production or loopback site).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"token":{"type":"string","description":"the one-time token from the Stitch Slop panel"},` +
			`"origin":{"type":"string","description":"the site the tab runs on, e.g. https://www.stitchslop.com or http://localhost:5173; default the bridge's own"}},"required":["token"]}`),
	},
	{
		Name: toolStatus,
		Description: "The connection as the bridge sees it: whether a tab is attached (and how it authenticated), port and site, the sites this machine is paired with, " +
			"whether a token is armed, how often a browser tried, each refusal with its reason and what to do about it, page tools dropped and why, " +
			"other bridges running, and the other agents driving the same tab.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
	},
	{
		Name: toolCall,
		Description: "Run any command of the user's Stitch Slop tab by its page name (e.g. scene.describe), with its arguments. " +
			"For clients whose tool list does not show the tab's tools (it changes as tabs attach): wait_for_connection and connection_status name the commands the tab offers. " +
			"The answer is the same as calling the tab's tool directly.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"command":{"type":"string","description":"the page command, e.g. scene.describe"},` +
			`"args":{"type":"object","description":"its arguments"}},"required":["command"]}`),
	},
	{
		Name: toolCallWithFile,
		Description: "Run a page command with a file from this machine put into its arguments by path, so the file never passes through you as base64. " +
			"Images (PNG, JPEG, WebP, GIF) are recognised by their bytes, design files by the app's extensions (.dst .pes .exp .jef .vp3 .svg .dxf … .stitchslop); " +
			"at most 14 MiB each, hidden files and symbolic links refused. If any file is refused, nothing is sent.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"command":{"type":"string","description":"the page command, e.g. design.import"},` +
			`"args":{"type":"object","description":"its other arguments"},` +
			`"path":{"type":"string","description":"the file, by path on this machine"},` +
			`"fileArg":{"type":"string","description":"the argument the file goes in (a dotted key reaches into nested objects)"},` +
			`"as":{"type":"string","enum":["dataUrl","text"],"description":"dataUrl (default): data:<type>;base64,...; text: the file's UTF-8 text"},` +
			`"nameArg":{"type":"string","description":"an argument to put the file's name in"},` +
			`"files":{"type":"array","maxItems":3,"description":"up to three more files","items":{"type":"object","properties":{` +
			`"path":{"type":"string"},"fileArg":{"type":"string"},"as":{"type":"string","enum":["dataUrl","text"]},"nameArg":{"type":"string"}},"required":["path","fileArg"]}}},` +
			`"required":["command","path","fileArg"]}`),
	},
	{
		Name: toolCallToFiles,
		Description: "Run a page command and write the files its answer carries into a directory on this machine, under the app's names, instead of returning them to you: " +
			"every {name, dataUrl} in the answer, a top-level dataUrl (named by fileName when the answer names none) and a top-level text (as textFile). " +
			"Only the kinds the app produces are written, never over an existing file unless overwrite; the answer says savedTo and savedBytes.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"command":{"type":"string","description":"the page command, e.g. design.export"},` +
			`"args":{"type":"object","description":"its arguments"},` +
			`"dir":{"type":"string","description":"the directory to write into (made if missing)"},` +
			`"fileName":{"type":"string","description":"the name for a top-level dataUrl the answer does not name"},` +
			`"textFile":{"type":"string","description":"write a top-level text to this name"},` +
			`"overwrite":{"type":"boolean","description":"replace files that exist (default: never)"}},` +
			`"required":["command","dir"]}`),
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

// callTool runs one of the bridge's own tools; any other name goes to the
// page.
func (f *face) callTool(ctx context.Context, name string, args json.RawMessage) toolResult {
	switch name {
	case toolWait:
		return f.waitTool(ctx, args)
	case toolPair:
		return f.pairTool(ctx, args)
	case toolStatus:
		return f.statusTool()
	case toolCallWithFile:
		return f.callWithFile(ctx, args)
	case toolCallToFiles:
		return f.callToFiles(ctx, args)
	case toolCall:
		return f.genericCall(ctx, args)
	}
	return f.pageCall(ctx, name, args)
}

// pageCommand checks the command a file tool runs on the page.
func pageCommand(command string) error {
	if !toolNameRE().MatchString(command) || isBridgeTool(command) {
		return fmt.Errorf("command must be a page command (names match %s), got %q", toolNameRE(), clip(command, 64))
	}
	return nil
}

// genericCall is call: {command, args} sent as the page tool command
// would be, whether or not the client's tool list shows it (the tab
// decides what it runs).
func (f *face) genericCall(ctx context.Context, raw json.RawMessage) toolResult {
	var p struct {
		Command string          `json:"command"`
		Args    json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return textResult(f.toolName(toolCall)+": the arguments are not what its schema says: "+err.Error(), true)
	}
	if err := pageCommand(p.Command); err != nil {
		return textResult("Nothing was sent to the tab: "+err.Error(), true)
	}
	if len(p.Args) > 0 && string(p.Args) != "null" && !isJSONObject(p.Args) {
		return textResult("Nothing was sent to the tab: args must be a JSON object.", true)
	}
	return f.pageCall(ctx, p.Command, p.Args)
}

// callWithFile is call_with_file: the files read here and put into the
// arguments, then the command sent as any page call is.
func (f *face) callWithFile(ctx context.Context, raw json.RawMessage) toolResult {
	var p struct {
		Command string          `json:"command"`
		Args    json.RawMessage `json:"args"`
		FileArg
		Files []FileArg `json:"files"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return textResult("call_with_file: the arguments are not what its schema says: "+err.Error(), true)
	}
	if err := pageCommand(p.Command); err != nil {
		return textResult("Nothing was sent to the tab: "+err.Error(), true)
	}
	if len(p.Files) > maxFilesPerCall-1 {
		return textResult(fmt.Sprintf("Nothing was sent to the tab: at most %d more files (files), got %d.", maxFilesPerCall-1, len(p.Files)), true)
	}
	if len(p.Args) > 0 && string(p.Args) != "null" && !isJSONObject(p.Args) {
		return textResult("Nothing was sent to the tab: args must be a JSON object.", true)
	}
	args, err := withFiles(p.Args, append([]FileArg{p.FileArg}, p.Files...))
	if err != nil {
		return textResult("Nothing was sent to the tab: "+strings.TrimPrefix(err.Error(), errRefused.Error()+": "), true)
	}
	return f.pageCall(ctx, p.Command, args)
}

// callToFiles is call_to_files: the command sent, and the files its
// answer carries written into dir (saveFiles); the result is the answer
// with savedTo / savedBytes where the files were, led by what was saved.
func (f *face) callToFiles(ctx context.Context, raw json.RawMessage) toolResult {
	var p struct {
		Command   string          `json:"command"`
		Args      json.RawMessage `json:"args"`
		Dir       string          `json:"dir"`
		FileName  string          `json:"fileName"`
		TextFile  string          `json:"textFile"`
		Overwrite bool            `json:"overwrite"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return textResult("call_to_files: the arguments are not what its schema says: "+err.Error(), true)
	}
	if err := pageCommand(p.Command); err != nil {
		return textResult("Nothing was sent to the tab: "+err.Error(), true)
	}
	if strings.TrimSpace(p.Dir) == "" {
		return textResult("Nothing was sent to the tab: dir, the directory to write into, is required.", true)
	}
	env, err := f.b.Call(withAgent(ctx, f.id), p.Command, p.Args)
	if err != nil {
		return f.callFailed(p.Command, err)
	}
	out, saved, notSaved, err := saveFiles(env, SaveOptions{Dir: p.Dir, FileName: p.FileName, TextFile: p.TextFile, Overwrite: p.Overwrite, Command: p.Command})
	var lead string
	switch {
	case errors.Is(err, errNoFiles):
		lead = "Nothing was saved: " + err.Error() + "."
	case err != nil:
		lead = "Nothing was saved: " + err.Error() + "."
	default:
		env = out
		var b strings.Builder
		if len(saved) > 0 {
			fmt.Fprintf(&b, "Saved %d file(s):", len(saved))
			for _, s := range saved {
				fmt.Fprintf(&b, " %s (%d bytes);", s.Path, s.Bytes)
			}
		}
		if len(notSaved) > 0 {
			fmt.Fprintf(&b, " Not saved:")
			for _, n := range notSaved {
				fmt.Fprintf(&b, " %s: %s;", n.Name, n.Reason)
			}
		}
		lead = strings.TrimSpace(strings.TrimSuffix(b.String(), ";"))
	}
	res := envelopeResult(env)
	text, _ := res.Content[0]["text"].(string)
	res.Content[0]["text"] = lead + "\n" + text
	if len(saved) == 0 && err == nil {
		res.IsError = true // there were files, and none could be written
	}
	return res
}

// pairTool is pair: the token (and the tab's site) as arguments, never
// argv or a file, armed on the bridge this face serves (through its keyed
// POST /pair when that bridge runs in another process).
func (f *face) pairTool(ctx context.Context, args json.RawMessage) toolResult {
	var p struct {
		Token  string `json:"token"`
		Origin string `json:"origin"`
	}
	if json.Unmarshal(args, &p) != nil || strings.TrimSpace(p.Token) == "" {
		return textResult("pair needs token: the one-time token the user's Stitch Slop panel shows.", true)
	}
	site, err := f.b.pair(ctx, p.Origin, strings.TrimSpace(p.Token))
	if err != nil {
		if errors.Is(err, errTokenSpent) || strings.Contains(err.Error(), errTokenSpent.Error()) {
			return textResult("That token was redeemed already (tokens are one-time): ask the user to reopen the Stitch Slop panel for a fresh one.", true)
		}
		return textResult("The token was not armed: "+err.Error(), true)
	}
	return textResult(fmt.Sprintf("Armed a one-time token for %s on the bridge (port %d): the tab pairs with it the next time it connects, on its own; call %s to wait for it.",
		site, f.b.Port(), f.waitName()), false)
}

// statusTool is connection_status: the bridge's report, with a summary
// line first and the other agents driving the tab (not this face).
func (f *face) statusTool() toolResult {
	r := f.b.Report()
	mode := "bridge"
	if r.Face != nil {
		mode = r.Face.Mode
	}
	others := othersThan(r.Agents, f.id)
	v := map[string]any{
		"mode": mode, "attached": r.Connected, "port": r.Port, "origin": r.Origin,
		"pairedSites": r.PairedSites, "tokenArmed": r.TokenArmed, "armedSites": r.ArmedSites,
		"attempts": r.Attempts, "refusals": r.Refusals, "droppedTools": r.DroppedTools,
		"otherBridges": r.OtherBridges, "otherAgents": others, "tools": r.Tools,
	}
	if r.Connected {
		v["pageOrigin"], v["attachedWith"] = r.PageOrigin, r.AttachedWith
	}
	if r.OtherBridges == nil {
		v["otherBridges"] = []map[string]any{}
	}
	if r.DroppedTools == nil {
		v["droppedTools"] = []DroppedTool{}
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	summary := r.Message
	if len(others) > 0 {
		summary += fmt.Sprintf(" Other agents drive the same tab: %s.", agentNames(others))
	}
	return textResult(strings.TrimSpace(summary+faceNote(r))+"\n"+string(b), false)
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

// callNote names the tab's commands and the generic call that reaches
// them, for a client that does not re-fetch its tool list when the tab's
// tools change (issue 30).
func callNote(tools []PageTool, callTool string) string {
	const most = 40
	note := " If your tool list does not show the tab's tools, call them through " + callTool + " {command, args}"
	if len(tools) == 0 {
		return note + "."
	}
	var shown []string
	for _, t := range tools[:min(len(tools), most)] {
		shown = append(shown, t.Name)
	}
	note += "; the tab's commands: " + strings.Join(shown, ", ")
	if len(tools) > most {
		note += fmt.Sprintf(" and %d more (connection_status lists them all)", len(tools)-most)
	}
	return note + "."
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
	opened := false // a bridge this call started: any tab on it attached during the call
	if wantsOwnBridge(args) {
		if f.own == nil {
			ownNote = fmt.Sprintf(" (ownBridge: this face's bridge, on port %d, is its own already.)", f.b.Port())
		} else {
			// Its message is the face's report from now on (faceNote).
			var err error
			if opened, err = f.own(ctx); err != nil {
				return textResult("ownBridge: "+err.Error(), true)
			}
		}
	}
	deadline := time.Now().Add(time.Duration(secs * float64(time.Second)))
	_, attached := f.b.Tools()
	already := attached && !opened
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
		text += sawText(r, f.toolName(toolStatus))
		return textResult(text+faceNote(r)+ownNote, false)
	}
	r := f.b.Report()
	site := r.PageOrigin
	if site == "" {
		site = f.b.Origin()
	}
	greeting := fmt.Sprintf("Connected: the Stitch Slop tab at %s is attached to this bridge (port %d)", site, r.Port)
	if already {
		greeting = fmt.Sprintf("Already connected: the Stitch Slop tab at %s is attached to this bridge (port %d)", site, r.Port)
	}
	switch r.AttachedWith {
	case "token":
		greeting += ", with the one-time token (now spent; the tab keeps a pairing for next time)."
	case "pairing":
		greeting += ", with its stored pairing."
	default:
		greeting += "."
	}
	if others := othersThan(r.Agents, f.id); len(others) > 0 {
		greeting += fmt.Sprintf(" Other agents drive the same tab: %s.", agentNames(others))
	}
	tools, _ := f.b.Tools()
	greeting += callNote(tools, f.toolName(toolCall))
	greeting += faceNote(r) + ownNote
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

// sawText says, for a wait that timed out, what the bridge saw: no
// attempt at all (the switch, the browser, or another bridge took the
// tab), or attempts refused, each reason with its fix (§5).
func sawText(r StatusReport, statusTool string) string {
	if r.Attempts == 0 {
		text := "No browser has tried to connect to this bridge at all, so it is not refusing anything. Either the Allow agent connections switch is off in the user's tab " +
			"(ask them), or the browser blocks the connection before it opens (a Content-Security-Policy block shows in the browser console; " +
			"Chrome asks once to let the site access other apps and services on this device, and a refusal is sticky)"
		if len(r.OtherBridges) > 0 {
			ports := make([]string, len(r.OtherBridges))
			for i, o := range r.OtherBridges {
				ports[i] = fmt.Sprint(o["port"])
			}
			text += ", or the tab attached to another bridge running for it (port " + strings.Join(ports, ", ") + ")"
		}
		return text + "."
	}
	if len(r.Refusals) == 0 {
		return fmt.Sprintf("A browser reached the bridge %d times, and nothing was refused; the tab may be reloading.", r.Attempts)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The browser tried %d times and was refused:", r.Attempts)
	for _, rf := range r.Refusals {
		fmt.Fprintf(&b, " %s (%d×): %s", rf.Reason, rf.Count, rf.Fix)
	}
	fmt.Fprintf(&b, " %s lists every refusal.", statusTool)
	return b.String()
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
// line; a dataUrl becomes an image block and leaves the text; any other
// bulk (leaveOutRaw) becomes a note; ok:false is isError.
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
	for k, raw := range m {
		m[k] = leaveOutRaw(raw, bulkHowMCP) // bulk stays out of the model's context
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
