package stitchslop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub/mcpserver"
)

// sdkConn hands ServeMCP one end of the SDK's in-memory transport, already
// connected.
type sdkConn struct{ c mcp.Connection }

func (s sdkConn) Connect(context.Context) (mcp.Connection, error) { return s.c, nil }

type mcpClient struct {
	*mcp.ClientSession
	changed  chan struct{}
	initSeen *atomic.Bool
}

// connectSDK runs the bridge's MCP face on one end of the SDK's in-memory
// transport and connects the SDK client to the other.
func connectSDK(t *testing.T, b *bridge) *mcpClient {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := st.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var initSeen atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.S.ServeMCP(ctx, sdkConn{conn}, func() { initSeen.Store(true) })
	}()
	changed := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		conn.Close()
		cancel()
		<-done
	})
	return &mcpClient{ClientSession: cs, changed: changed, initSeen: &initSeen}
}

func (c *mcpClient) expectListChanged(t *testing.T) {
	t.Helper()
	select {
	case <-c.changed:
	case <-time.After(frameWait):
		t.Fatal("no notifications/tools/list_changed")
	}
}

func toolNames(t *testing.T, c *mcpClient) []string {
	t.Helper()
	res, err := c.ListTools(t.Context(), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func callText(t *testing.T, c *mcpClient, name string, args any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := c.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	if len(res.Content) == 0 {
		t.Fatalf("tools/call %s: no content", name)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("first block is %T, want text", res.Content[0])
	}
	return res, tc.Text
}

// §3.2 initialize through the SDK client.
func TestMCPInitializeSDK(t *testing.T) {
	b := startBridge(t, nil)
	c := connectSDK(t, b)
	ir := c.InitializeResult()
	if ir.ServerInfo.Name != "stitchslop-connector" {
		t.Errorf("serverInfo.name = %q", ir.ServerInfo.Name)
	}
	if ir.Capabilities.Tools == nil || !ir.Capabilities.Tools.ListChanged {
		t.Errorf("capabilities = %+v, want tools.listChanged", ir.Capabilities)
	}
	if !strings.Contains(ir.Instructions, "wait_for_connection") || !strings.Contains(ir.Instructions, "Allow agent connections") {
		t.Errorf("instructions = %q", ir.Instructions)
	}
	if strings.Contains(strings.ToLower(ir.Instructions), "press connect") {
		t.Errorf("instructions send the user to press something: %q", ir.Instructions)
	}
	if !c.initSeen.Load() {
		t.Error("initialize did not mark the bridge owned")
	}
	if err := c.Ping(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if b.S.Status().AgentSessions != 1 {
		t.Errorf("agent sessions = %d", b.S.Status().AgentSessions)
	}
}

// §3.3 the tool list arrives late; list_changed on connect, revision, disconnect.
func TestMCPToolListLifecycle(t *testing.T) {
	b := startBridge(t, nil)
	c := connectSDK(t, b)
	if names := toolNames(t, c); strings.Join(names, ",") != ownTools {
		t.Fatalf("tools before a page = %v", names)
	}
	p, _ := b.attach(map[string]any{"token": testToken})
	c.expectListChanged(t) // connect
	p.send(map[string]any{"tools": []any{
		map[string]any{"name": "scene.describe", "description": "what is on the canvas", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{"limit": map[string]any{"type": "number"}}}},
	}})
	c.expectListChanged(t) // list arrived
	if names := toolNames(t, c); !contains(strings.Join(names, ","), "scene.describe") {
		t.Fatalf("page tools missing: %v", names)
	}
	p.send(map[string]any{"tools": []any{map[string]any{"name": "scene.describe"}, map[string]any{"name": "render"}}})
	c.expectListChanged(t) // revised
	if names := toolNames(t, c); strings.Join(names, ",") != ownTools+",scene.describe,render" {
		t.Fatalf("revised list: %v", names)
	}
	p.Close()
	c.expectListChanged(t) // disconnect
	if names := toolNames(t, c); strings.Join(names, ",") != ownTools {
		t.Fatalf("page tools kept after disconnect: %v", names)
	}
}

// §3.2 translation and §3.5 results.
func TestMCPToolsCallTranslationAndResults(t *testing.T) {
	b := startBridge(t, nil)
	c := connectSDK(t, b)
	p, _ := b.attach(map[string]any{"token": testToken})
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG fake image bytes"))
	var lastFrame atomic.Value
	p.serve(func(cmd string, args map[string]any) map[string]any {
		lastFrame.Store(map[string]any{"command": cmd, "args": args})
		switch cmd {
		case "scene.describe":
			return map[string]any{"ok": true, "say": "Three objects on the hoop.", "objects": 3}
		case "render":
			return map[string]any{"ok": true, "dataUrl": "data:image/png;base64," + png, "width": 10}
		case "fail":
			return map[string]any{"ok": false, "error": "nope", "message": "That stitch type does not exist."}
		}
		return map[string]any{"ok": true}
	})

	res, text := callText(t, c, "scene.describe", map[string]any{"limit": 5})
	f := lastFrame.Load().(map[string]any)
	if f["command"] != "scene.describe" || f["args"].(map[string]any)["limit"] != float64(5) {
		t.Fatalf("page frame %v", f)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("result %+v", res)
	}
	if !strings.HasPrefix(text, "Three objects on the hoop.\n") {
		t.Fatalf("say does not lead: %q", text)
	}
	var env map[string]any
	if err := json.Unmarshal([]byte(text[strings.Index(text, "\n")+1:]), &env); err != nil {
		t.Fatalf("text after say is not the JSON envelope: %q", text)
	}
	if _, has := env["id"]; has {
		t.Fatalf("transport id leaked: %v", env)
	}
	if env["objects"] != float64(3) {
		t.Fatalf("envelope %v", env)
	}

	res, text = callText(t, c, "render", nil)
	if res.IsError || len(res.Content) != 2 {
		t.Fatalf("render result %+v", res)
	}
	img, ok := res.Content[1].(*mcp.ImageContent)
	if !ok || img.MIMEType != "image/png" || string(img.Data) != "\x89PNG fake image bytes" {
		t.Fatalf("image block %+v", res.Content[1])
	}
	if strings.Contains(text, "dataUrl") || strings.Contains(text, png) || !strings.Contains(text, `"width":10`) {
		t.Fatalf("dataUrl not removed from the text: %q", text)
	}
	if f := lastFrame.Load().(map[string]any); len(f["args"].(map[string]any)) != 0 {
		t.Fatalf("missing arguments must be sent as {}: %v", f)
	}

	res, text = callText(t, c, "fail", map[string]any{})
	if !res.IsError || !strings.Contains(text, "That stitch type does not exist.") {
		t.Fatalf("ok:false result %+v %q", res, text)
	}
}

func TestMCPCallWithoutPage(t *testing.T) {
	b := startBridge(t, nil)
	c := connectSDK(t, b)
	res, text := callText(t, c, "scene.describe", nil)
	if !res.IsError || !strings.Contains(text, "wait_for_connection") {
		t.Fatalf("no-page result %+v %q", res, text)
	}
}

// §3.4 wait_for_connection.
func TestMCPWaitForConnection(t *testing.T) {
	b := startBridge(t, nil)
	c := connectSDK(t, b)

	res, text := callText(t, c, "wait_for_connection", map[string]any{"timeoutSeconds": 0.05})
	if res.IsError || !strings.Contains(text, "Still waiting") || !strings.Contains(text, "again") {
		t.Fatalf("timeout result %+v %q", res, text)
	}

	type out struct {
		res  *mcp.CallToolResult
		text string
	}
	done := make(chan out, 1)
	go func() {
		r, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "wait_for_connection", Arguments: map[string]any{}})
		if err != nil {
			done <- out{}
			return
		}
		done <- out{r, r.Content[0].(*mcp.TextContent).Text}
	}()
	// The wait must be blocking before the page attaches, or it would take
	// the already-connected path this test does not mean.
	waitBlockedIn(t, "stitchslop.(*Server).waitAttached")
	p, _ := b.attach(map[string]any{"token": testToken})
	var described atomic.Int32
	p.serve(func(cmd string, _ map[string]any) map[string]any {
		if cmd == "scene.describe" {
			described.Add(1)
			return map[string]any{"ok": true, "summary": "an empty hoop"}
		}
		return nil
	})
	select {
	case o := <-done:
		if o.res == nil || o.res.IsError || !strings.Contains(o.text, "Connected") || !strings.Contains(o.text, "an empty hoop") {
			t.Fatalf("wait result %+v %q", o.res, o.text)
		}
	case <-time.After(frameWait):
		t.Fatal("wait_for_connection did not return on connect")
	}
	// Already connected: returns at once, still describing the scene.
	res, text = callText(t, c, "wait_for_connection", nil)
	if res.IsError || !strings.Contains(text, "Already connected") || !strings.Contains(text, "an empty hoop") || described.Load() != 2 {
		t.Fatalf("already-connected result %q (describes %d)", text, described.Load())
	}
}

// timeoutSeconds bounds wait_for_connection also when a tab is attached
// but does not answer the greeting's scene.describe (the call timeout is
// a minute); the answer says the describe got no answer.
func TestMCPWaitBoundedWithASilentTab(t *testing.T) {
	b := startBridge(t, func(o *Config) { o.CallTimeout = time.Minute })
	c := connectSDK(t, b)
	b.attach(map[string]any{"token": testToken}) // never answers a command
	done := make(chan string, 1)
	go func() {
		_, text := callText(t, c, "wait_for_connection", map[string]any{"timeoutSeconds": 0.1})
		done <- text
	}()
	select {
	case text := <-done:
		if !strings.Contains(text, "Already connected") || !strings.Contains(text, `"error":"uncertain"`) {
			t.Fatalf("result %q", text)
		}
	case <-time.After(greetingFloor + frameWait):
		t.Fatal("wait_for_connection outlived its timeout with an attached, silent tab")
	}
}

// Issue 28: pair and connection_status are the bridge's own tools now,
// as in the app's plugin: a page tool of the same name is dropped (and
// reported), the bridge's answers. A wait that times out after refusals
// names each reason and what to do about it.
func TestMCPBridgeToolsShadowThePages(t *testing.T) {
	b := startBridge(t, nil)
	c := connectSDK(t, b)
	if _, err := b.Dial("/", adaptertest.DialOptions{Origin: "https://evil.example"}); err == nil {
		t.Fatal("foreign origin upgraded")
	}
	_, text := callText(t, c, "wait_for_connection", map[string]any{"timeoutSeconds": 0.05})
	if !strings.Contains(text, "The browser tried 1 times and was refused: origin (1×): ") || !strings.Contains(text, "start the bridge with the site") ||
		!strings.Contains(text, "connection_status lists every refusal") {
		t.Fatalf("timeout after a refusal: %q", text)
	}
	p, _ := b.attach(map[string]any{"token": testToken})
	p.send(map[string]any{"tools": []any{map[string]any{"name": "pair"}, map[string]any{"name": "connection_status"}, map[string]any{"name": "render"}}})
	adaptertest.WaitFor(t, "the page's tools", func() bool {
		return strings.Join(toolNames(t, c), ",") == ownTools+",render"
	})
	if d := b.S.Report().DroppedTools; len(d) != 2 || d[0].Reason != "shadows a bridge tool" {
		t.Fatalf("dropped %+v", d)
	}
	p.serve(func(cmd string, _ map[string]any) map[string]any {
		return map[string]any{"ok": true, "say": "the page ran " + cmd}
	})
	if _, text := callText(t, c, "connection_status", map[string]any{}); strings.Contains(text, "the page ran") || !strings.Contains(text, `"attached": true`) {
		t.Fatalf("connection_status: %q", text)
	}
}

// rawMCP speaks newline-delimited JSON-RPC to ServeMCP over pipes, to check
// exact bytes the SDK client would normalise away.
type rawMCP struct {
	t    *testing.T
	w    *io.PipeWriter
	out  chan map[string]any
	raw  chan string
	done chan bool
}

func startRaw(t *testing.T, b *bridge) *rawMCP {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &rawMCP{t: t, w: inW, out: make(chan map[string]any, 64), raw: make(chan string, 64), done: make(chan bool, 1)}
	go func() {
		init, _ := b.S.ServeMCP(context.Background(), &mcpserver.LineTransport{In: inR, Out: outW}, nil)
		outW.Close()
		r.done <- init
	}()
	go func() {
		br := bufio.NewReader(outR)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				close(r.raw)
				return
			}
			line = bytes.TrimSuffix(line, []byte("\n"))
			r.raw <- string(line)
			var m map[string]any
			if json.Unmarshal(line, &m) != nil {
				t.Errorf("stdout line is not JSON: %q", line)
				continue
			}
			r.out <- m
		}
	}()
	t.Cleanup(func() { inW.Close(); <-r.done })
	return r
}

func (r *rawMCP) send(s string) {
	if _, err := io.WriteString(r.w, s+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rawMCP) recvRaw() string {
	r.t.Helper()
	select {
	case s := <-r.raw:
		<-r.out
		return s
	case <-time.After(frameWait):
		r.t.Fatal("no JSON-RPC message")
		return ""
	}
}

func (r *rawMCP) none(d time.Duration) {
	r.t.Helper()
	select {
	case s := <-r.raw:
		r.t.Fatalf("unexpected message %s", s)
	case <-time.After(d):
	}
}

func TestMCPRawBytes(t *testing.T) {
	b := startBridge(t, nil)
	r := startRaw(t, b)

	// initialize echoes whatever version the client asked for.
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-12-31","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}`)
	got := r.recvRaw()
	want := `{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"experimental":{"claude/channel":{}},"tools":{"listChanged":true}},"instructions":` + mustMarshal(mcpInstructions) +
		`,"protocolVersion":"1999-12-31","serverInfo":{"name":"stitchslop-connector","version":"` + Version + `"}}}`
	if got != want {
		t.Fatalf("initialize:\n got %s\nwant %s", got, want)
	}
	// Notifications are never answered.
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	r.send(`{"jsonrpc":"2.0","method":"notifications/unknown","params":{}}`)
	r.none(50 * time.Millisecond)
	// ping → {} with the same id (string ids too).
	r.send(`{"jsonrpc":"2.0","id":"p-1","method":"ping"}`)
	if got := r.recvRaw(); got != `{"jsonrpc":"2.0","id":"p-1","result":{}}` {
		t.Fatalf("ping = %s", got)
	}
	// Unknown method → -32601.
	r.send(`{"jsonrpc":"2.0","id":7,"method":"resources/list"}`)
	if got := r.recvRaw(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,`) {
		t.Fatalf("unknown method = %s", got)
	}
	// Garbage → parse error, id null; the loop keeps going.
	r.send(`{oops`)
	if got := r.recvRaw(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,`) {
		t.Fatalf("parse error = %s", got)
	}
	r.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x","arguments":[1]}}`)
	if got := r.recvRaw(); !strings.Contains(got, `"code":-32602`) {
		t.Fatalf("non-object arguments = %s", got)
	}
	// list_changed is a bare notification.
	b.attach(map[string]any{"token": testToken})
	if got := r.recvRaw(); got != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
		t.Fatalf("list_changed = %s", got)
	}
	r.w.Close()
	if init := <-r.done; !init {
		t.Fatal("ServeMCP did not report initialize")
	}
	r.done <- true
}

// §3.5 images on the wire: the image block carries the dataUrl's own
// base64 (the SDK re-encodes the decoded bytes, which for canonical base64
// is the same text), and isError is always said (§3.2).
func TestMCPRawImageBytes(t *testing.T) {
	b := startBridge(t, nil)
	r := startRaw(t, b)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}`)
	r.recvRaw()
	p, _ := b.attach(map[string]any{"token": testToken})
	if got := r.recvRaw(); got != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
		t.Fatalf("list_changed = %s", got)
	}
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n fake image bytes \x00\xff"))
	p.serve(func(string, map[string]any) map[string]any {
		return map[string]any{"ok": true, "dataUrl": "data:image/png;base64," + png, "width": 10}
	})
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"render","arguments":{}}}`)
	want := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"ok\":true,\"width\":10}"},` +
		`{"type":"image","mimeType":"image/png","data":"` + png + `"}],"isError":false}}`
	if got := r.recvRaw(); got != want {
		t.Fatalf("render:\n got %s\nwant %s", got, want)
	}
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// notifications/cancelled stops a blocking tools/call, which then gets no
// answer; the session carries on.
func TestMCPCancelledCallGetsNoAnswer(t *testing.T) {
	b := startBridge(t, nil)
	r := startRaw(t, b)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
	r.recvRaw()
	r.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"wait_for_connection","arguments":{"timeoutSeconds":120}}}`)
	time.Sleep(20 * time.Millisecond)
	r.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"user"}}`)
	r.none(200 * time.Millisecond)
	// Were the wait still running, a page attaching now would answer it.
	p, _ := b.attach(map[string]any{"token": testToken})
	p.serve(func(string, map[string]any) map[string]any { return map[string]any{"ok": true} })
	deadline := time.After(300 * time.Millisecond)
	for done := false; !done; {
		select {
		case s := <-r.raw:
			<-r.out
			if strings.Contains(s, `"id":9`) {
				t.Fatalf("a cancelled call was answered: %s", s)
			}
		case <-deadline:
			done = true
		}
	}
	r.send(`{"jsonrpc":"2.0","id":10,"method":"ping"}`)
	if got := r.recvRaw(); got != `{"jsonrpc":"2.0","id":10,"result":{}}` {
		t.Fatalf("ping after cancel = %s", got)
	}
}
