package aiui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/aiui/frame"
)

// 150 sockets that upgrade /ws and declare a 32 MiB frame without a hello
// cost a few MiB, not 32 MiB each; /tools likewise with its 4 MiB
// messages.
func TestPreAuthFloodCostsLittle(t *testing.T) {
	for _, tc := range []struct {
		path string
		size uint64
	}{{"/ws", DefaultMaxFrameBytes}, {"/tools", DefaultMaxMessageBytes}} {
		h, _ := start(t, nil) // a backend each, so one flood's remains do not blur the other's figures
		adaptertest.PreAuthFloodCostsLittle(t, h.WSURL(tc.path), adaptertest.DialOptions{}, tc.size)
	}
}

// The pre-hello limits fit what the protocol lets an honest client send: a
// hello with a large meta (up to the 64 KiB header cap) and a first
// register of a few hundred tools. What lifts the guard on /tools is the
// first accepted register or activation; a message that is neither keeps
// it on, so the next one is still bounded.
func TestPreAuthFitsHonestClients(t *testing.T) {
	h, _ := start(t, nil)
	ws := h.MustDial("/ws", adaptertest.DialOptions{})
	meta := &frame.HelloMeta{Intent: json.RawMessage(`{"pad":"` + strings.Repeat("i", 40<<10) + `"}`)}
	if r := sendAck(t, ws, mustFrame(t, frame.Envelope{V: 1, Kind: "hello", Format: "text-concat", Meta: meta}, nil)); !r.OK {
		t.Fatalf("a 40 KiB hello: %+v", r)
	}
	big := strings.Repeat("x", 1<<20) // far over the pre-hello limit, fine after it
	if r := sendAck(t, ws, dataFrame(t, "t1", true, `{"text":"`+big+`"}`)); !r.OK {
		t.Fatalf("a 1 MiB frame after hello: %+v", r)
	}

	page := h.MustDial("/tools", adaptertest.DialOptions{})
	var reg strings.Builder
	reg.WriteString(`{"v":1,"type":"register","ns":"big","tools":[`)
	for i := range 200 {
		if i > 0 {
			reg.WriteString(",")
		}
		fmt.Fprintf(&reg, `{"name":"tool%d","description":"%s","inputSchema":{"type":"object"}}`, i, strings.Repeat("d", 500))
	}
	reg.WriteString(`]}`)
	page.SendText(reg.String()) // ~110 KiB
	if m, err := page.Next(10 * time.Second); err != nil || !strings.Contains(m.Text(), `"registered"`) {
		t.Fatalf("first register: %v %s", err, m.Text())
	}

	ext := h.MustDial("/tools", adaptertest.DialOptions{})
	ext.SendText(`{"v":1,"type":"nonsense"}`)
	if m, err := ext.Next(10 * time.Second); err != nil || !strings.Contains(m.Text(), `"error"`) {
		t.Fatalf("nonsense: %v %s", err, m.Text())
	}
	ext.SendText(`{"v":1,"type":"activation","tab":{"chromeTabId":1,"windowId":1},"active":true}`)
	adaptertest.WaitFor(t, "every socket authenticated", func() bool {
		b := h.Adapter.(*Server).cur.Load()
		return b.wsEP.Unauthenticated() == 0 && b.toolsEP.Unauthenticated() == 0
	})

	stranger := h.MustDial("/tools", adaptertest.DialOptions{})
	stranger.SendText(`{}`)
	stranger.SendText(`{"pad":"` + strings.Repeat("p", MaxFirstToolsMessage) + `"}`)
	select {
	case <-stranger.Closed():
	case <-time.After(10 * time.Second):
		t.Fatal("a large second message before any register was not refused")
	}
	if code, _ := stranger.CloseCode(); code != 1009 {
		t.Fatalf("close code %d, want 1009", code)
	}
}
