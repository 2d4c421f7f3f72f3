package adaptertest

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lxzan/gws"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/ws"
)

// echo is the smallest real adapter: an origin-checked WebSocket echo on
// the shared socket helper (heartbeat included), used to prove the harness
// itself works.
type echo struct{}

var _ adapters.Adapter = (*echo)(nil)

func (e *echo) Status() adapters.Status { return adapters.Status{} }

func (e *echo) Serve(ctx context.Context, env *adapters.Env) error {
	ln, port, err := hub.Listen([]int{0})
	if err != nil {
		return err
	}
	policy := hub.NewOriginPolicy("https://page.example")
	sockets := &ws.Sockets{}
	ep := sockets.Endpoint(echoHandler{}, ws.Options{Heartbeat: env.Heartbeat, Log: env.Log})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hub.HostAllowed(r, port) || !policy.AllowedRequest(r) {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		ep.Serve(w, r)
	})
	// Logged before Ready: tests read the logs as soon as Start returns.
	env.Log.Info("echo listening", "port", port)
	env.Ready(port)
	return hub.ServeHTTP(ctx, ln, h, sockets, env.Log)
}

type echoHandler struct{}

func (echoHandler) Open(c *ws.Conn) ws.Session { return echoSession{c} }

type echoSession struct{ c *ws.Conn }

func (e echoSession) Message(m *gws.Message) { e.c.WriteFrame(m.Opcode, m.Bytes(), 0) }
func (echoSession) Closed(error)             {}

func startEcho(t *testing.T, o Options) *Harness {
	o.Name = "echo"
	return Start(t, &echo{}, o)
}

func TestHarnessEcho(t *testing.T) {
	h := startEcho(t, Options{})
	c := h.MustDial("/", DialOptions{Origin: "https://page.example"})
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
	h := startEcho(t, Options{})
	for name, o := range map[string]DialOptions{
		"wrong origin":   {Origin: "https://evil.example"},
		"missing origin": {},
		"null origin":    {Origin: "null"},
		// Exact origins (issue 15): a browser sends the canonical form
		// only, so any other spelling is refused.
		"upper-case origin": {Origin: "https://PAGE.example"},
		"trailing slash":    {Origin: "https://page.example/"},
		"rebinding host":    {Origin: "https://page.example", Host: "evil.example:" + hub.FormatPorts([]int{h.Port()})},
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
	h := startEcho(t, Options{Heartbeat: ws.HeartbeatConfig{Interval: 50 * time.Millisecond, DeadAfter: time.Second}})
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
	h := startEcho(t, Options{})
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

// An adapter that stops by itself (an idle rule here) closes Done, and a
// test that read Done does not make the cleanup's Stop wait for anything.
func TestHarnessDoneAfterIdleExit(t *testing.T) {
	h := startEcho(t, Options{Lifecycle: hub.NewLifecycle(hub.IdleRules{AgentIdle: 20 * time.Millisecond})})
	select {
	case <-h.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the idle rule never ended the adapter")
	}
	var idle *hub.IdleError
	if !errors.As(h.Err(), &idle) {
		t.Fatalf("Err = %v, want an idle exit", h.Err())
	}
	stopped := make(chan error, 1)
	go func() { stopped <- h.Stop() }()
	select {
	case err := <-stopped:
		if !errors.As(err, &idle) {
			t.Fatalf("Stop = %v, want the idle exit", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Stop waited after Done was read")
	}
}

func TestHarnessNameDefaultsToPackage(t *testing.T) {
	h := Start(t, &echo{}, Options{})
	if h.Name != "adaptertest" || !strings.Contains(h.Logs(), "adapter=adaptertest") {
		t.Fatalf("name %q, logs %q", h.Name, h.Logs())
	}
}
