package pixelle

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// pageHTML is a minimal Pixelle page: it creates a session with its real
// Origin, connects as the browser over a real WebSocket and answers routed
// commands from its own in-page state. RELAY is substituted by the test.
const pageHTML = `<!doctype html>
<meta charset="utf-8">
<title>pixelle test page</title>
<script>
const RELAY = "{{RELAY}}";
window.status_ = "starting";
window.pairCode = "";
window.paired = false;
const canvas = {projectId: "chromium", title: "Chromium canvas", revision: 7, selection: [], nodes: [], edges: []};
let ws;
async function start() {
  const r = await fetch(RELAY + "/api/sessions", {method: "POST"});
  if (r.status !== 201) { window.status_ = "session failed " + r.status; return; }
  const s = await r.json();
  ws = new WebSocket(RELAY.replace("http://", "ws://") + "/relay");
  ws.onopen = () => ws.send(JSON.stringify({type: "hello", role: "browser", sessionId: s.id, token: s.browserToken}));
  ws.onclose = (e) => { window.status_ = "closed " + e.code; };
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    if (m.type === "ready") window.status_ = "ready";
    if (m.type === "pair.code") window.pairCode = m.code;
    if (m.type === "paired") window.paired = true;
    if (m.type === "command") {
      const answer = m.command.method === "state.read"
        ? {type: "result", id: m.id, result: Object.assign({userAgent: navigator.userAgent, actor: m.actor}, canvas)}
        : {type: "result", id: m.id, error: {code: "UNSUPPORTED", message: "test page only reads"}};
      ws.send(JSON.stringify(answer));
    }
  };
}
window.requestCode = () => ws.send(JSON.stringify({type: "pair.create"}));
start().catch((e) => { window.status_ = "error " + e; });
</script>`

func TestChromiumPage(t *testing.T) {
	adaptertest.RequireChromium(t)
	// The page's server comes first: its origin is the relay's WEBSITE.
	var page string
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(page))
	}))
	defer site.Close()
	s := New(&Config{Website: site.URL})
	h := adaptertest.Start(t, s, adaptertest.Options{})
	page = strings.ReplaceAll(pageHTML, "{{RELAY}}", h.URL(""))

	ctx, stopBrowser := adaptertest.Chromium(t, context.Background())
	// Registered after the harness, so Chromium is gone before its leak check.
	t.Cleanup(stopBrowser)

	// The first Run starts the browser; it must not carry a timeout.
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL)); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	limit := chromedp.WithPollingTimeout(20 * time.Second)
	status, err := chromedp.Run(ctx, chromedp.Poll[string](`window.status_ !== "starting" && window.status_`, limit))
	if err != nil || status != "ready" {
		t.Fatalf("page status %q (%v), want ready", status, err)
	}
	if !s.Status().PageAttached || !h.Lifecycle.Activity("pixelle").PageEverAttached {
		t.Fatal("relay does not see the page")
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(window.requestCode(), true)`)); err != nil {
		t.Fatalf("pair.create: %v", err)
	}
	code, err := chromedp.Run(ctx, chromedp.Poll[string](`window.pairCode`, limit))
	if err != nil {
		t.Fatalf("pair.code: %v", err)
	}
	c := &Client{Relay: h.URL("")}
	cr, err := c.Pair(context.Background(), code)
	if err != nil {
		t.Fatalf("pair: %v", err)
	}
	if paired, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.paired`, limit)); err != nil || !paired {
		t.Fatalf("page never saw paired: %v", err)
	}
	out, err := c.Call(context.Background(), cr, json.RawMessage(`{"method":"state.read"}`))
	if err != nil || out.Error != nil {
		t.Fatalf("state.read: %v %s", err, out.Error)
	}
	var st struct {
		ProjectID, Title, UserAgent, Actor string
		Revision                           int
	}
	mustUnmarshal(t, out.Result, &st)
	if st.ProjectID != "chromium" || st.Title != "Chromium canvas" || st.Revision != 7 || st.Actor != "agent" || !strings.Contains(st.UserAgent, "Chrome") {
		t.Fatalf("state from the page: %+v", st)
	}
}
