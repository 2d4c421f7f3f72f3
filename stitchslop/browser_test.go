package stitchslop

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub/ws"
)

// pageHTML is a minimal Stitch Slop page: it dials the bridge, pairs with
// the token, sends its tool list and answers commands, like the real tab.
const pageHTML = `<!doctype html><meta charset="utf-8"><title>stitch slop test page</title>
<script>
window.state = "dialing";
const ws = new WebSocket("ws://127.0.0.1:%d/");
ws.onopen = () => ws.send(JSON.stringify({token: %q}));
ws.onclose = () => { window.state = "closed"; };
ws.onmessage = (ev) => {
  const m = JSON.parse(ev.data);
  if (m.hello) {
    window.state = "paired";
    window.secret = m.pairingSecret || "";
    ws.send(JSON.stringify({tools: [{name: "scene.describe", description: "the scene"}]}));
    return;
  }
  if (m.id !== undefined) {
    ws.send(JSON.stringify({id: m.id, ok: true, say: "Hello from Chromium.", command: m.command, args: m.args, ua: navigator.userAgent}));
  }
};
</script>`

// TestRealChromiumPage drives a real headless Chromium whose page performs
// the handshake over a real WebSocket (real Origin header, real ping/pong)
// and answers a command sent through the control plane.
func TestRealChromiumPage(t *testing.T) {
	adaptertest.RequireChromium(t)
	// The page's own origin: a loopback site serving the HTML above.
	var bridgePort int
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, pageHTML, bridgePort, testToken)
	}))
	defer site.Close()

	b := startBridge(t, func(o *Config) { o.Origin = site.URL }, adaptertest.Options{
		// A fast heartbeat proves the browser answers pings by itself; the
		// dead-after window is wide so a loaded machine cannot fake silence.
		Heartbeat: ws.HeartbeatConfig{Interval: 100 * time.Millisecond, DeadAfter: 2500 * time.Millisecond},
	})
	bridgePort = b.Port()

	ctx, cancel := adaptertest.Chromium(t, context.Background())
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()

	if _, err := chromedp.Run(ctx, chromedp.Navigate(site.URL)); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	var state string
	deadline := time.Now().Add(30 * time.Second)
	for state != "paired" {
		if time.Now().After(deadline) {
			t.Fatalf("page state %q; refusals %+v", state, b.S.Report().Refusals)
		}
		time.Sleep(20 * time.Millisecond)
		st, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.state`))
		if err != nil {
			t.Fatal(err)
		}
		state = st
	}
	b.waitConnected(true)
	adaptertest.WaitFor(t, "the page's tool list", func() bool { tools, _ := b.S.Tools(); return len(tools) == 1 })

	// Several heartbeat periods pass: Chromium's automatic pongs keep it attached.
	time.Sleep(3 * time.Second)
	if !b.S.attached() {
		t.Fatal("Chromium page dropped by the heartbeat despite answering pings")
	}

	env := mustJSON(t, b.control("POST", "/call", `{"command":"scene.describe","args":{"limit":2}}`).Body)
	if env["ok"] != true || env["say"] != "Hello from Chromium." || env["command"] != "scene.describe" {
		t.Fatalf("envelope %v", env)
	}
	if ua, _ := env["ua"].(string); !strings.Contains(ua, "Chrome") {
		t.Fatalf("not answered by Chromium: %v", env["ua"])
	}
	secret, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`window.secret`))
	if len(secret) < 43 {
		t.Fatalf("the page got no pairing secret: %q", secret)
	}
	cancelT()
	cancel() // closes the browser: the bridge must see the page go
	b.waitConnected(false)
}
