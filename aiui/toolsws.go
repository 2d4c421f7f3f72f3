package aiui

import (
	"encoding/json"
	"net/http"

	"github.com/lxzan/gws"

	"github.com/hubdev/hub/aiui/tools"
	"github.com/hubdev/hub/hub/ws"
)

func (b *backend) upgradeTools(w http.ResponseWriter, r *http.Request) { b.toolsEP.Serve(w, r) }

// toolsConn is one /tools socket: a directory client whose writes go
// through the socket's bounded writer.
type toolsConn struct {
	b      *backend
	c      *ws.Conn
	client *tools.Client
}

type toolsHandler struct{ b *backend }

// Open connects a /tools socket to the directory.
func (h toolsHandler) Open(c *ws.Conn) ws.Session {
	return &toolsConn{b: h.b, c: c, client: h.b.dir.Connect(c.WriteJSON)}
}

// Closed drops the socket's registrations and fails its pending calls.
func (s *toolsConn) Closed(error) { s.b.dir.Disconnect(s.client) }

func (s *toolsConn) Message(m *gws.Message) {
	if m.Opcode != gws.OpcodeText {
		b, _ := json.Marshal(map[string]any{"v": 1, "type": "error", "error": "/tools speaks JSON text frames"})
		s.c.WriteText(b)
		return
	}
	kind, err := s.b.dir.Handle(s.client, m.Bytes())
	if err != nil {
		return
	}
	// /tools has no credential: the first accepted register (a page) or
	// activation (a reporter) is what lifts the pre-authentication guard.
	s.c.Authenticated()
	if kind == "register" {
		s.b.pageActivity()
	}
}
