package aiui

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/aiui/intent"
)

// screenshots is a custom raw-codec format: it counts bytes and sends one
// prompt with the total on fin.
type screenshots struct {
	ctx *channel.ThreadContext
	n   int
}

func (s *screenshots) OnMessage(payload any, meta channel.MessageMeta) error {
	s.n += len(payload.([]byte))
	if meta.Fin {
		s.ctx.Close()
		return s.ctx.SendPrompt(channel.Prompt{Text: strings.Repeat("#", s.n)})
	}
	return nil
}

// TestCustomFormatsAndReloadRebuildsRegistry: a custom format registered
// through the LoadFormats seam works over /ws, and a reload rebuilds the
// registry from the seam (here: a second load adds a format).
func TestCustomFormatsAndReloadRebuildsRegistry(t *testing.T) {
	var loads atomic.Int32
	h, _ := start(t, func(_ *Config, s *Server) {
		s.Formats = func(d *intent.Deps) channel.Registry {
			r := DefaultFormats(d)
			r["screenshots"] = channel.Format{Codec: frame.Raw, New: func(ctx *channel.ThreadContext) channel.Processor { return &screenshots{ctx: ctx} }}
			if loads.Add(1) > 1 {
				r["added-by-reload"] = channel.TextConcat()
			}
			return r
		}
	})
	c := h.MustDial("/ws", adaptertest.DialOptions{})
	sendAck(t, c, helloFrame(t, "screenshots"))
	sendAck(t, c, dataFrame(t, "s", false, "\x89PNG"))
	if r := sendAck(t, c, dataFrame(t, "s", true, "....")); !r.Closed {
		t.Fatalf("fin: %+v", r)
	}
	if recs := records(t, h); len(recs) != 1 || recs[0].Text != "########" {
		t.Fatalf("records = %+v", recs)
	}
	c2 := h.MustDial("/ws", adaptertest.DialOptions{})
	if r := sendAck(t, c2, helloFrame(t, "added-by-reload")); !r.Fatal {
		t.Fatalf("format known before reload: %+v", r)
	}
	h.Do(adaptertest.Request{Method: "POST", Path: "/debug/api/reload"})
	c3 := h.MustDial("/ws", adaptertest.DialOptions{})
	if r := sendAck(t, c3, helloFrame(t, "added-by-reload")); !r.OK {
		t.Fatalf("reload did not rebuild the registry: %+v", r)
	}
	info := string(h.Do(adaptertest.Request{Path: "/debug/api/info"}).Body)
	if !strings.Contains(info, `"formats":["added-by-reload","intent-v1","screenshots","text-concat"]`) {
		t.Fatalf("info = %s", info)
	}
}
