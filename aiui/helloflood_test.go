package aiui

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/ws"
)

// Issue 7: /ws takes no credential, so anyone local can open sockets that
// say hello and then stay silent. As many as a listener has HTTP slots
// (256) used to take every one of them, and /health stopped answering.
// Now they hold no HTTP slot, at most ws.DefaultMaxSockets of them stay
// (the oldest go, with 1013), /health answers, a page registered on
// /tools keeps its tools, and a page that connects afterwards is served.
func TestHelloFloodLeavesHealthAndNewPages(t *testing.T) {
	h, _ := start(t, nil)
	page := h.MustDial("/tools", adaptertest.DialOptions{})
	page.SendText(`{"v":1,"type":"register","ns":"keep","tools":[{"name":"look","inputSchema":{"type":"object"}}]}`)
	if m, err := page.Next(10 * time.Second); err != nil || !strings.Contains(m.Text(), `"registered"`) {
		t.Fatalf("register: %v %s", err, m.Text())
	}

	var flood []*adaptertest.WSClient
	for i := range hub.DefaultMaxConns {
		c, err := h.Dial("/ws", adaptertest.DialOptions{})
		if err != nil {
			t.Fatalf("hello-only socket %d: %v", i, err)
		}
		t.Cleanup(c.Close)
		if r := sendAck(t, c, helloFrame(t, "text-concat")); !r.OK {
			t.Fatalf("hello %d: %+v", i, r)
		}
		flood = append(flood, c)
	}

	health, err := (&http.Client{Timeout: 5 * time.Second}).Get(h.URL("/health"))
	if err != nil {
		t.Fatalf("/health during the flood: %v", err)
	}
	health.Body.Close()
	if health.StatusCode != 200 {
		t.Fatalf("/health during the flood: %d", health.StatusCode)
	}

	honest := h.MustDial("/ws", adaptertest.DialOptions{})
	if r := sendAck(t, honest, helloFrame(t, "text-concat")); !r.OK {
		t.Fatalf("a new page's hello: %+v", r)
	}
	if r := sendAck(t, honest, dataFrame(t, "t1", true, `{"text":"still heard"}`)); !r.OK {
		t.Fatalf("a new page's prompt: %+v", r)
	}

	// The oldest hello-only sockets made room, told why; the newest stay.
	evicted := len(flood) + 1 - ws.DefaultMaxSockets
	for i, c := range flood {
		if i >= evicted {
			select {
			case <-c.Closed():
				t.Fatalf("hello-only socket %d of %d closed; only the %d oldest should be", i, len(flood), evicted)
			default:
			}
			continue
		}
		select {
		case <-c.Closed():
		case <-time.After(10 * time.Second):
			t.Fatalf("hello-only socket %d still open", i)
		}
		if code, _ := c.CloseCode(); code != 1013 {
			t.Fatalf("hello-only socket %d closed with %d, want 1013", i, code)
		}
	}
	select {
	case <-page.Closed():
		t.Fatal("the /tools page was closed by a /ws flood")
	default:
	}
	var after struct {
		PageTools struct{ Tools int } `json:"pageTools"`
	}
	if got := h.Do(adaptertest.Request{Path: "/health"}); json.Unmarshal(got.Body, &after) != nil || after.PageTools.Tools != 1 {
		t.Fatalf("the page's tools are gone after the flood: %s", got.Body)
	}
	adaptertest.WaitFor(t, "the prompt", func() bool {
		for _, r := range records(t, h) {
			if strings.Contains(r.Text, "still heard") {
				return true
			}
		}
		return false
	})
}
