package aiui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub/ws"
)

// browserPage probes /health cross-origin, streams binary frames on /ws
// (a text-concat thread in three frames, then an intent-v1 turn with a
// canvas PNG as shot_1), and registers a page tool on /tools that answers
// with the live document title and user agent.
const browserPage = `<!doctype html><meta charset="utf-8"><title>aiui browser page</title>
<canvas id=c width=8 height=8></canvas>
<script>
const PORT = %d;
window.state = "start";
const enc = new TextEncoder();
function frame(env, payload = new Uint8Array(0)) {
  const h = enc.encode(JSON.stringify(env));
  const f = new Uint8Array(4 + h.length + payload.length);
  new DataView(f.buffer).setUint32(0, h.length, false);
  f.set(h, 4); f.set(payload, 4 + h.length);
  return f;
}
async function main() {
  const health = await (await fetch("http://127.0.0.1:" + PORT + "/health")).json();
  if (!health.pageTools) { window.state = "no pageTools in /health"; return; }
  const tools = new WebSocket("ws://127.0.0.1:" + PORT + "/tools");
  tools.onopen = () => tools.send(JSON.stringify({v: 1, type: "register", ns: "browser", hash: "b1",
    url: location.href, tab: {title: document.title, url: location.href},
    tools: [{name: "page.info", description: "the page title and user agent", inputSchema: {type: "object"}}]}));
  tools.onmessage = (e) => {
    const m = JSON.parse(e.data);
    if (m.type === "registered") window.registered = true;
    if (m.type === "call") tools.send(JSON.stringify({v: 1, type: "result", callId: m.callId, ok: true,
      value: {title: document.title, ua: navigator.userAgent, args: m.args}}));
  };
  const acks = [];
  const ws = new WebSocket("ws://127.0.0.1:" + PORT + "/ws");
  ws.binaryType = "arraybuffer";
  let expect = 0;
  const done = new Promise((resolve) => { ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    if (m.kind) return;
    acks.push(m);
    if (acks.length === expect) resolve();
  }; });
  await new Promise((r) => ws.onopen = r);
  const c = document.getElementById("c").getContext("2d");
  c.fillStyle = "orange"; c.fillRect(0, 0, 8, 8);
  const png = new Uint8Array(await (await new Promise((r) => document.getElementById("c").toBlob(r, "image/png"))).arrayBuffer());
  const meta = {tab: {title: document.title, url: location.href}, source: {root: "/repo/browser"}};
  const frames = [
    frame({v: 1, kind: "hello", format: "text-concat", meta}),
    frame({v: 1, kind: "data", threadId: "t1"}, enc.encode(JSON.stringify({text: "hello "}))),
    frame({v: 1, kind: "data", threadId: "t1"}, enc.encode(JSON.stringify({text: "from "}))),
    frame({v: 1, kind: "data", threadId: "t1", fin: true}, enc.encode(JSON.stringify({text: "Chromium"}))),
  ];
  expect = frames.length;
  for (const f of frames) ws.send(f);
  await done;
  const iws = new WebSocket("ws://127.0.0.1:" + PORT + "/ws");
  iws.binaryType = "arraybuffer";
  await new Promise((r) => iws.onopen = r);
  const events = [{at: 1, type: "thread-open", trigger: "ink"},
    {at: 2, type: "shot", marker: "shot_1", rect: {x: 0, y: 0, w: 8, h: 8}},
    {at: 3, type: "thread-close", reason: "send"}];
  const iacks = [];
  const idone = new Promise((resolve) => { iws.onmessage = (e) => {
    const m = JSON.parse(e.data); if (m.kind) return; iacks.push(m); if (iacks.length === 4) resolve(); }; });
  iws.send(frame({v: 1, kind: "hello", format: "intent-v1", meta: {...meta, intent: {transcriber: "mock"}}}));
  iws.send(frame({v: 1, kind: "data", threadId: "i1", chunk: {kind: "events"}}, enc.encode(JSON.stringify({events}))));
  iws.send(frame({v: 1, kind: "data", threadId: "i1", chunk: {kind: "attachment", id: "shot_1", mime: "image/png"}}, png));
  iws.send(frame({v: 1, kind: "data", threadId: "i1", fin: true}));
  await idone;
  window.acks = JSON.stringify(acks.concat(iacks));
  window.state = "streamed";
}
main().catch((e) => { window.state = "error: " + e; });
</script>`

func TestRealChromium(t *testing.T) {
	adaptertest.RequireChromium(t)
	cfg := DefaultConfig()
	cfg.Port = 0
	cfg.DebounceMS = 20
	s := New(cfg)
	h := adaptertest.Start(t, s, adaptertest.Options{
		// a fast heartbeat proves the browser answers pings by itself; a
		// wide window, because a loaded machine under -race can take a
		// second or more to deliver a live browser's pong
		Heartbeat: ws.HeartbeatConfig{Interval: 100 * time.Millisecond, DeadAfter: 2500 * time.Millisecond},
	})
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, browserPage, h.Port())
	}))
	defer site.Close()

	// the agent side: the MCP face over the in-memory transport
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	serverT, clientT := mcp.NewInMemoryTransports()
	faceDone := make(chan error, 1)
	go func() { faceDone <- RunFace(ctx, serverT, control(t, h), FaceOptions{NotifyPageTools: true}) }()
	notes := make(chan *jsonrpc.Request, 64)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "browser-test", Version: "0"}, nil).
		Connect(ctx, &teeTransport{inner: clientT, ch: notes}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatal(err)
	}
	adaptertest.WaitFor(t, "the face to attach", func() bool { return s.Status().AgentSessions == 1 })

	bctx, cancelB := adaptertest.Chromium(t, ctx)
	defer cancelB()
	if _, err := chromedp.Run(bctx, chromedp.Navigate(site.URL)); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	var state string
	deadline := time.Now().Add(30 * time.Second)
	for state != "streamed" {
		if time.Now().After(deadline) || strings.HasPrefix(state, "error") || strings.HasPrefix(state, "no ") {
			t.Fatalf("page state %q", state)
		}
		time.Sleep(20 * time.Millisecond)
		if state, err = chromedp.Run(bctx, chromedp.Evaluate[string](`window.state`)); err != nil {
			t.Fatal(err)
		}
	}
	var acks string
	acks, _ = chromedp.Run(bctx, chromedp.Evaluate[string](`window.acks`))
	want := `[{"ok":true},{"ok":true,"threadId":"t1"},{"ok":true,"threadId":"t1"},{"ok":true,"threadId":"t1","closed":true},` +
		`{"ok":true},{"ok":true,"threadId":"i1"},{"ok":true,"threadId":"i1"},{"ok":true,"threadId":"i1","closed":true}]`
	if acks != want {
		t.Fatalf("acks from the browser:\n got %s\nwant %s", acks, want)
	}

	// both prompts reach the agent as channel notifications
	var prompts []map[string]any
	for len(prompts) < 2 {
		select {
		case n := <-notes:
			var p map[string]any
			json.Unmarshal(n.Params, &p)
			if n.Method == MethodChannel && p["meta"].(map[string]any)["kind"] == "prompt" {
				prompts = append(prompts, p)
			}
		case <-ctx.Done():
			t.Fatalf("prompts: %v", prompts)
		}
	}
	if c := prompts[0]["content"].(string); !strings.HasSuffix(c, "hello from Chromium") || !strings.Contains(c, "Source root: /repo/browser") {
		t.Fatalf("text-concat prompt: %q", c)
	}
	shot, _ := prompts[1]["meta"].(map[string]any)["shot_1"].(string)
	if png, err := os.ReadFile(shot); err != nil || !strings.HasPrefix(string(png), "\x89PNG") {
		t.Fatalf("shot_1 %q not a PNG saved on arrival: %v", shot, err)
	}

	// past the dead-after: only Chromium's automatic pongs keep it attached
	time.Sleep(3 * time.Second)
	// the MCP face calls the page tool the browser registered
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "page_tools_call", Arguments: map[string]any{"name": "page.info", "args": map[string]any{"q": 1}}})
	if err != nil || res.IsError {
		t.Fatalf("page_tools_call: %v %+v", err, res)
	}
	var v struct {
		Title string         `json:"title"`
		UA    string         `json:"ua"`
		Args  map[string]any `json:"args"`
	}
	json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &v)
	if v.Title != "aiui browser page" || !strings.Contains(v.UA, "Chrome") || v.Args["q"] != float64(1) {
		t.Fatalf("page tool answer %+v", v)
	}
	cancelB()
	cs.Close()
	cancel()
	<-faceDone
}
