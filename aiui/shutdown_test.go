package aiui

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/aiui/intent"
)

// slowTeardown is a custom format whose processor takes a moment to tear
// down when its connection drops (as an intent-v1 turn closing its
// upstream sockets does).
type slowTeardown struct{ done *atomic.Bool }

func (p *slowTeardown) OnMessage(any, channel.MessageMeta) error { return nil }

func (p *slowTeardown) OnAbandon() {
	time.Sleep(100 * time.Millisecond)
	p.done.Store(true)
}

// TestServeWaitsForSocketTeardown: the adapter contract — Serve closes
// every hijacked socket and stops its goroutines before returning — so an
// open thread's teardown has run by the time Serve returns, not after.
func TestServeWaitsForSocketTeardown(t *testing.T) {
	var done atomic.Bool
	h, _ := start(t, func(_ *Config, s *Server) {
		s.Formats = func(d *intent.Deps) channel.Registry {
			r := DefaultFormats(d)
			r["slow"] = channel.Format{Codec: frame.Raw, New: func(*channel.ThreadContext) channel.Processor { return &slowTeardown{done: &done} }}
			return r
		}
	})
	c := h.MustDial("/ws", adaptertest.DialOptions{})
	sendAck(t, c, helloFrame(t, "slow"))
	if r := sendAck(t, c, dataFrame(t, "open", false, "x")); !r.OK {
		t.Fatalf("data: %+v", r)
	}
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	if !done.Load() {
		t.Fatal("Serve returned before the open thread's processor was torn down")
	}
}
