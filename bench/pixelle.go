package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// pixelleState is what the scripted canvas answers state.read with.
const pixelleState = `{"projectId":"example","title":"Example","revision":4,"selection":["brief"],"nodes":[{"id":"brief","kind":"note","title":"Brief"}],"edges":[]}`

func pixelleCommand() *Load {
	l := &Load{Name: "pixelle command", Adapter: "pixelle",
		Section: "website: " + benchOrigin + "\nport: 0\n", Node: "pixelle.js", Bare: true, Unit: "op"}
	l.Connect = func(ctx context.Context, srv *Server, callers int) (*Clients, error) {
		base := l.base(srv)
		wsURL := "ws://127.0.0.1:" + strconv.Itoa(l.port(srv)) + "/relay"
		hc := newHTTPClient(1)
		defer hc.CloseIdleConnections()
		req, _ := http.NewRequest("POST", base+"/api/sessions", nil)
		req.Header.Set("Origin", benchOrigin)
		got, err := fetch(hc, req)
		if err != nil {
			return nil, err
		}
		var sess struct{ ID, BrowserToken string }
		if err := json.Unmarshal(got, &sess); err != nil {
			return nil, fmt.Errorf("pixelle /api/sessions: %.200s", got)
		}
		br, err := dialWS(wsURL, benchOrigin, nil)
		if err != nil {
			return nil, err
		}
		var closers []func()
		closeAll := func() {
			for _, c := range closers {
				c()
			}
		}
		closers = append(closers, br.Close)
		step := func(c *wsConn, send, want string) error {
			if send != "" {
				if err := c.Send(send); err != nil {
					return err
				}
			}
			m, err := c.Next(10 * time.Second)
			if err == nil && !bytes.Contains(m, []byte(want)) {
				err = fmt.Errorf("pixelle: %q, want %s", m, want)
			}
			return err
		}
		if err := step(br, fmt.Sprintf(`{"type":"hello","role":"browser","sessionId":%q,"token":%q}`, sess.ID, sess.BrowserToken), `"ready"`); err != nil {
			closeAll()
			return nil, err
		}
		if err := br.Send(`{"type":"pair.create"}`); err != nil {
			closeAll()
			return nil, err
		}
		m, err := br.Next(10 * time.Second)
		var code struct{ Code string }
		if err != nil || json.Unmarshal(m, &code) != nil || code.Code == "" {
			closeAll()
			return nil, fmt.Errorf("pixelle pair.create: %q %v", m, err)
		}
		req, _ = http.NewRequest("POST", base+"/api/pair", strings.NewReader(`{"code":"`+code.Code+`"}`))
		got, err = fetch(hc, req)
		var pair struct{ SessionID, Token string }
		if err != nil || json.Unmarshal(got, &pair) != nil {
			closeAll()
			return nil, fmt.Errorf("pixelle /api/pair: %.200s %v", got, err)
		}
		if err := step(br, "", `"paired"`); err != nil {
			closeAll()
			return nil, err
		}
		br.Answer(canvasAnswer)
		c := &Clients{Close: closeAll}
		for range callers {
			a, err := dialWS(wsURL, "", nil)
			if err != nil {
				closeAll()
				return nil, err
			}
			closers = append(closers, a.Close)
			if err := step(a, fmt.Sprintf(`{"type":"hello","role":"agent","sessionId":%q,"token":%q}`, pair.SessionID, pair.Token), `"ready"`); err != nil {
				closeAll()
				return nil, err
			}
			n := 0
			c.Ops = append(c.Ops, func() (int64, error) {
				n++
				id := "c" + strconv.Itoa(n)
				if err := a.Send(`{"type":"command","id":"` + id + `","command":{"method":"state.read"}}`); err != nil {
					return 0, err
				}
				m, err := a.Next(20 * time.Second)
				if err == nil && !bytes.Contains(m, []byte(`"id":"`+id+`"`)) {
					err = fmt.Errorf("pixelle: answer %.200q to %s", m, id)
				}
				return 1, err
			})
		}
		return c, nil
	}
	return l
}

// canvasAnswer is the scripted Pixelle page: every routed command gets
// the state fixture under its relay id.
func canvasAnswer(msg []byte) []byte {
	var f struct {
		Type string          `json:"type"`
		ID   json.RawMessage `json:"id"`
	}
	if json.Unmarshal(msg, &f) != nil || f.Type != "command" || len(f.ID) == 0 {
		return nil
	}
	out := make([]byte, 0, 64+len(pixelleState))
	out = append(out, `{"type":"result","id":`...)
	out = append(out, f.ID...)
	out = append(out, `,"result":`...)
	out = append(out, pixelleState...)
	return append(out, '}')
}
