package aiui

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/lxzan/gws"

	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/hub"
)

const sessionKey = "state"

func (b *backend) upgradeWS(w http.ResponseWriter, r *http.Request) {
	b.serveSocket(w, r, b.wsUp, "ws")
}

// wsConn is one /ws socket's state.
type wsConn struct {
	b     *backend
	c     *gws.Conn
	proto *channel.Conn
	hb    *hub.Heartbeat
	wmu   sync.Mutex
}

func (s *wsConn) writeJSON(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.c.WriteMessage(gws.OpcodeText, data)
}

// NewThread implements channel.Host.
func (s *wsConn) NewThread(ctx *channel.ThreadContext) {
	tr := s.b.traces.open(ctx.ThreadID, ctx.Format, ctx.Hello)
	tr.stage("hello", map[string]any{"format": ctx.Format, "meta": ctx.Hello})
	ctx.TraceID = tr.ID
	ctx.Trace = tr.stage
	ctx.Log = s.b.log.With("thread", ctx.ThreadID, "format", ctx.Format)
	ctx.MaxTextBytes = s.b.cfg.MaxMessageBytes
	ctx.SpillDir = StateDir(s.b.env.Dirs)
	ctx.Push = s.writeJSON
	ctx.SendPrompt = func(p channel.Prompt) error {
		if p.Meta == nil {
			p.Meta = map[string]string{}
		}
		p.Meta["format"] = ctx.Format
		s.b.outbox.Deliver(p)
		tr.done("sent")
		return nil
	}
}

type wsHandler struct{ b *backend }

func state(c *gws.Conn) *wsConn {
	v, _ := c.Session().Load(sessionKey)
	s, _ := v.(*wsConn)
	return s
}

func (h *wsHandler) OnOpen(c *gws.Conn) {
	s := &wsConn{b: h.b, c: c}
	s.proto = channel.NewConn(*h.b.formats.Load(), s, h.b.log)
	s.hb = hub.StartHeartbeat(h.b.env.Heartbeat, c, func() { c.NetConn().Close() })
	c.Session().Store(sessionKey, s)
}

func (h *wsHandler) OnClose(c *gws.Conn, err error) {
	h.b.untrack(c)
	if s := state(c); s != nil {
		s.hb.Stop()
		s.wmu.Lock()
		s.proto.Abandon()
		s.wmu.Unlock()
	}
}

func (h *wsHandler) OnPing(c *gws.Conn, payload []byte) {
	if s := state(c); s != nil {
		s.hb.Seen()
	}
	c.WritePong(payload)
}

func (h *wsHandler) OnPong(c *gws.Conn, _ []byte) {
	if s := state(c); s != nil {
		s.hb.Seen()
	}
}

// OnMessage hands the frame to the protocol state machine without copying
// (the payload is a view into gws's buffer, released after the processor
// returns), then sends exactly one ack; a fatal ack closes the socket.
func (h *wsHandler) OnMessage(c *gws.Conn, m *gws.Message) {
	defer m.Close()
	s := state(c)
	if s == nil {
		return
	}
	s.hb.Seen()
	s.wmu.Lock()
	wasHello := s.proto.HelloDone()
	resp := s.proto.Handle(m.Opcode == gws.OpcodeBinary, m.Bytes())
	s.wmu.Unlock()
	if !wasHello && s.proto.HelloDone() {
		h.b.pageActivity()
	}
	s.writeJSON(resp)
	if resp.Fatal {
		code := uint16(1002)
		if m.Opcode != gws.OpcodeBinary {
			code = 1003
		}
		c.WriteClose(code, []byte("fatal protocol error"))
		c.NetConn().Close()
	}
}
