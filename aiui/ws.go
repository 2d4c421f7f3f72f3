package aiui

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/lxzan/gws"

	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/hub/ws"
)

func (b *backend) upgradeWS(w http.ResponseWriter, r *http.Request) { b.wsEP.Serve(w, r) }

// wsConn is one /ws socket's state.
type wsConn struct {
	b     *backend
	c     *ws.Conn
	proto *channel.Conn
	wmu   sync.Mutex // serialises the protocol state machine
}

func (s *wsConn) writeJSON(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.c.WriteText(data)
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
		stampSocket(p.Meta, s.c.Header())
		if _, err := s.b.outbox.Deliver(p); err != nil {
			return err
		}
		tr.done(stateDelivered)
		return nil
	}
}

type wsHandler struct{ b *backend }

// Open starts a /ws socket's protocol state machine.
func (h wsHandler) Open(c *ws.Conn) ws.Session {
	s := &wsConn{b: h.b, c: c}
	s.proto = channel.NewConn(*h.b.formats.Load(), s, h.b.log)
	s.proto.Pool = h.b.held
	return s
}

// Closed abandons the socket's open threads.
func (s *wsConn) Closed(error) {
	s.wmu.Lock()
	s.proto.Abandon()
	s.wmu.Unlock()
}

// Message hands the frame to the protocol state machine without copying
// (the payload is a view into gws's buffer, released after the processor
// returns), then sends exactly one ack (a Reply: the acks of frames a page
// sent back to back leave together); a fatal ack closes the socket.
func (s *wsConn) Message(m *gws.Message) {
	s.wmu.Lock()
	wasHello := s.proto.HelloDone()
	resp := s.proto.Handle(m.Opcode == gws.OpcodeBinary, m.Bytes())
	s.wmu.Unlock()
	if !wasHello && s.proto.HelloDone() {
		s.c.Authenticated()
		s.b.pageActivity()
	}
	s.c.Reply(resp.AppendJSON(make([]byte, 0, 64)))
	if resp.Fatal {
		code := uint16(1002)
		if m.Opcode != gws.OpcodeBinary {
			code = 1003
		}
		s.c.Close(code, "fatal protocol error")
	}
}
