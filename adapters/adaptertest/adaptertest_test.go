package adaptertest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lxzan/gws"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
)

// echo is the smallest real adapter: an origin-checked WebSocket echo with
// the shared heartbeat, used to prove the harness itself works.
type echo struct{ conns hub.ConnSet }

var _ adapters.Adapter = (*echo)(nil)

func (e *echo) Name() string            { return "echo" }
func (e *echo) Status() adapters.Status { return adapters.Status{} }

func (e *echo) Serve(ctx context.Context, env *adapters.Env) error {
	ln, port, err := hub.Listen([]int{0})
	if err != nil {
		return err
	}
	policy := hub.NewOriginPolicy("https://page.example")
	up := gws.NewUpgrader(&echoHandler{e: e, env: env}, &gws.ServerOption{Recovery: gws.Recovery})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hub.HostAllowed(r, port) || !policy.AllowedRequest(r) {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		c, err := up.Upgrade(w, r)
		if err != nil {
			return
		}
		if !e.conns.Add(c) {
			return
		}
		go c.ReadLoop()
	})
	env.Ready(port)
	env.Log.Info("echo listening", "port", port)
	return hub.ServeHTTP(ctx, ln, h, &e.conns, env.Log)
}

type echoHandler struct {
	gws.BuiltinEventHandler
	e   *echo
	env *adapters.Env
}

func (h *echoHandler) OnOpen(c *gws.Conn) {
	hb := hub.StartHeartbeat(h.env.Heartbeat, c, func() { c.NetConn().Close() })
	c.Session().Store("hb", hb)
}

func (h *echoHandler) heartbeat(c *gws.Conn) *hub.Heartbeat {
	v, _ := c.Session().Load("hb")
	return v.(*hub.Heartbeat)
}

func (h *echoHandler) OnClose(c *gws.Conn, _ error) {
	h.heartbeat(c).Stop()
	h.e.conns.Remove(c)
}

func (h *echoHandler) OnPong(c *gws.Conn, _ []byte) { h.heartbeat(c).Seen() }

func (h *echoHandler) OnMessage(c *gws.Conn, m *gws.Message) {
	defer m.Close()
	h.heartbeat(c).Seen()
	c.WriteMessage(m.Opcode, m.Bytes())
}

func TestHarnessEcho(t *testing.T) {
	h := Start(t, &echo{}, Options{})
	c := h.MustDial("/", DialOptions{Origin: "https://PAGE.example/"})
	if err := c.SendText(`{"hi":1}`); err != nil {
		t.Fatal(err)
	}
	m, err := c.Next(5 * time.Second)
	if err != nil || m.Text() != `{"hi":1}` {
		t.Fatalf("echo = %q, %v", m.Text(), err)
	}
	if !strings.Contains(h.Logs(), "echo listening") || !strings.Contains(h.Logs(), "adapter=echo") {
		t.Fatalf("logs not captured: %q", h.Logs())
	}
}

func TestHarnessRefusals(t *testing.T) {
	h := Start(t, &echo{}, Options{})
	for name, o := range map[string]DialOptions{
		"wrong origin":   {Origin: "https://evil.example"},
		"missing origin": {},
		"null origin":    {Origin: "null"},
		"rebinding host": {Origin: "https://page.example", Host: "evil.example:" + hub.FormatPorts([]int{h.Port()})},
	} {
		c, err := h.Dial("/", o)
		if err == nil {
			c.Close()
			t.Errorf("%s: upgrade accepted", name)
			continue
		}
		if c.Status() != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", name, c.Status())
		}
	}
	if r := h.Do(Request{Path: "/"}); r.Status != http.StatusForbidden {
		t.Errorf("plain GET without origin: %d", r.Status)
	}
}

func TestHarnessHeartbeatDropsSilentPeer(t *testing.T) {
	h := Start(t, &echo{}, Options{Heartbeat: hub.HeartbeatConfig{Interval: 20 * time.Millisecond, DeadAfter: 100 * time.Millisecond}})
	alive := h.MustDial("/", DialOptions{Origin: "https://page.example"})
	asleep := h.MustDial("/", DialOptions{Origin: "https://page.example", NoPong: true})
	select {
	case <-asleep.Closed():
	case <-time.After(5 * time.Second):
		t.Fatal("a peer that never answers pings was not dropped")
	}
	select {
	case <-alive.Closed():
		t.Fatal("a peer that answers pings was dropped")
	default:
	}
	if alive.Pings() == 0 {
		t.Fatal("no pings seen")
	}
}

func TestHarnessStopClosesConnections(t *testing.T) {
	h := Start(t, &echo{}, Options{})
	c := h.MustDial("/", DialOptions{Origin: "https://page.example"})
	if err := h.Stop(); err != nil {
		t.Fatalf("Serve = %v", err)
	}
	select {
	case <-c.Closed():
	case <-time.After(5 * time.Second):
		t.Fatal("connection survived shutdown")
	}
	if code, _ := c.CloseCode(); code != 1001 {
		t.Fatalf("close code %d, want 1001", code)
	}
}
