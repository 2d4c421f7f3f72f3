package aiui

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/lxzan/gws"

	"github.com/hubdev/hub/aiui/tools"
	"github.com/hubdev/hub/hub"
)

func (b *backend) upgradeTools(w http.ResponseWriter, r *http.Request) {
	b.serveSocket(w, r, b.toolsUp, "tools")
}

type toolsConn struct {
	client *tools.Client
	hb     *hub.Heartbeat
}

type toolsHandler struct{ b *backend }

func toolsState(c *gws.Conn) *toolsConn {
	v, _ := c.Session().Load(sessionKey)
	s, _ := v.(*toolsConn)
	return s
}

func (h *toolsHandler) OnOpen(c *gws.Conn) {
	var wmu sync.Mutex
	limit := h.b.dir.CallTimeout
	if limit <= 0 {
		limit = tools.DefaultCallTimeout
	}
	// Every write to the page is bounded (a page that stopped reading
	// must not pin a call's goroutine), and the deadline is cleared after
	// each write under wmu, so no stale deadline fails a later ping.
	send := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		wmu.Lock()
		defer wmu.Unlock()
		c.SetWriteDeadline(time.Now().Add(limit))
		defer c.SetWriteDeadline(time.Time{})
		return c.WriteMessage(gws.OpcodeText, b)
	}
	s := &toolsConn{client: h.b.dir.Connect(send)}
	s.hb = hub.StartHeartbeat(h.b.env.Heartbeat, c, func() { c.NetConn().Close() })
	c.Session().Store(sessionKey, s)
}

func (h *toolsHandler) OnClose(c *gws.Conn, err error) {
	h.b.untrack(c)
	if s := toolsState(c); s != nil {
		s.hb.Stop()
		h.b.dir.Disconnect(s.client)
	}
}

func (h *toolsHandler) OnPing(c *gws.Conn, payload []byte) {
	if s := toolsState(c); s != nil {
		s.hb.Seen()
	}
	c.WritePong(payload)
}

func (h *toolsHandler) OnPong(c *gws.Conn, _ []byte) {
	if s := toolsState(c); s != nil {
		s.hb.Seen()
	}
}

func (h *toolsHandler) OnMessage(c *gws.Conn, m *gws.Message) {
	defer m.Close()
	s := toolsState(c)
	if s == nil {
		return
	}
	s.hb.Seen()
	if m.Opcode != gws.OpcodeText {
		b, _ := json.Marshal(map[string]any{"v": 1, "type": "error", "error": "/tools speaks JSON text frames"})
		c.WriteMessage(gws.OpcodeText, b)
		return
	}
	var peek struct {
		Type string `json:"type"`
	}
	json.Unmarshal(m.Bytes(), &peek)
	if peek.Type == "register" {
		h.b.pageActivity()
	}
	h.b.dir.Handle(s.client, m.Bytes())
}
