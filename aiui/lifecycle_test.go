package aiui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/aiui/tools"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/ws"
)

func TestFactory(t *testing.T) {
	f := Factory()
	cfg := f.NewConfig()
	if err := cfg.Validate(); err != nil || !cfg.Common().Enabled || cfg.(*Config).Port != DefaultPort {
		t.Fatalf("default config: %+v %v", cfg, err)
	}
	a, err := f.New(cfg)
	if _, ok := a.(*Server); err != nil || !ok || f.Name != "aiui" {
		t.Fatalf("New: %v %v (factory %q)", a, err, f.Name)
	}
}

// TestStatusAndLifecycle: page attach and agent activity reach the
// lifecycle, and Status reports ports, pages, faces and activity.
func TestStatusAndLifecycle(t *testing.T) {
	lc := hub.NewLifecycle(hub.IdleRules{})
	s := New(func() *Config { c := DefaultConfig(); c.Port = 0; return c }())
	h := adaptertest.Start(t, s, adaptertest.Options{Lifecycle: lc})
	st := s.Status()
	if st.Name != "aiui" || len(st.Ports) != 1 || st.Ports[0] != h.Port() || st.PageAttached {
		t.Fatalf("status before a page: %+v", st)
	}
	c := h.MustDial("/ws", adaptertest.DialOptions{})
	sendAck(t, c, helloFrame(t, "text-concat"))
	if a := lc.Activity("aiui"); !a.PageEverAttached {
		t.Fatal("hello did not report a page attach")
	}
	if st := s.Status(); !st.PageAttached || st.LastActivity.IsZero() {
		t.Fatalf("status with a page: %+v", st)
	}
	control(t, h).Info(context.Background())
	if a := lc.Activity("aiui"); a.LastAgent.IsZero() {
		t.Fatal("a control request did not count as agent activity")
	}
}

// TestDeadToolsPageIsDropped: a /tools page that stops answering pings is
// closed by the heartbeat, its registrations go, and its in-flight call
// is rejected.
func TestDeadToolsPageIsDropped(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Port = 0
	s := New(cfg)
	h := adaptertest.Start(t, s, adaptertest.Options{Heartbeat: ws.HeartbeatConfig{Interval: 20 * time.Millisecond, DeadAfter: 150 * time.Millisecond}})
	c := h.MustDial("/tools", adaptertest.DialOptions{NoPong: true})
	c.SendText(`{"v":1,"type":"register","ns":"sleepy","hash":"h","tools":[{"name":"nap","description":"never answers"}]}`)
	c.Next(5 * time.Second)
	cl := control(t, h)
	res, err := cl.Call(context.Background(), tools.CallRequest{Name: "nap"})
	if err != nil || res.OK || !strings.Contains(res.Error, "page disconnected") {
		t.Fatalf("in-flight call on a dead page: %+v %v", res, err)
	}
	select {
	case <-c.Closed():
	case <-time.After(5 * time.Second):
		t.Fatal("dead page not closed")
	}
	adaptertest.WaitFor(t, "registrations to drop", func() bool { return s.cur.Load().dir.Summary().Namespaces == 0 })
}

func TestAbandonedTurnIsTraced(t *testing.T) {
	h, _ := start(t, nil)
	c := h.MustDial("/ws", adaptertest.DialOptions{})
	sendAck(t, c, helloFrame(t, "intent-v1"))
	sendAck(t, c, dataFrame(t, "never-fins", false, ""))
	c.Close()
	adaptertest.WaitFor(t, "the abandoned trace", func() bool {
		return strings.Contains(string(h.Do(adaptertest.Request{Path: "/debug/api/traces"}).Body), `"state":"abandoned"`)
	})
	if len(records(t, h)) != 0 {
		t.Fatal("an abandoned turn sent a prompt")
	}
}

func TestServeFailsOnBusyPort(t *testing.T) {
	h, _ := start(t, nil)
	cfg := DefaultConfig()
	cfg.Port = h.Port()
	err := newKind(cfg, KindServe).Serve(context.Background(), h.Env)
	if err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("second backend on a busy port: %v", err)
	}
}
