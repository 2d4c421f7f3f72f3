package stitchslop

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lxzan/gws"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
)

// pipePage is a gws client over net.Pipe, usable inside a synctest bubble
// where real sockets are not.
type pipePage struct {
	mu     sync.Mutex
	pings  int
	pong   bool
	msgs   chan string
	closed chan struct{}
	once   sync.Once
}

func (p *pipePage) OnOpen(*gws.Conn) {}
func (p *pipePage) OnClose(*gws.Conn, error) {
	p.once.Do(func() { close(p.closed) })
}
func (p *pipePage) OnPing(c *gws.Conn, b []byte) {
	p.mu.Lock()
	p.pings++
	pong := p.pong
	p.mu.Unlock()
	if pong {
		c.WritePong(b)
	}
}
func (p *pipePage) OnPong(*gws.Conn, []byte) {}
func (p *pipePage) OnMessage(_ *gws.Conn, m *gws.Message) {
	p.msgs <- m.Data.String()
	m.Close()
}
func (p *pipePage) Pings() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pings
}

// pipeBridge wires a Server to one page over net.Pipe, without Serve.
func pipeBridge(t *testing.T, pong bool) (*Server, *pipePage, *gws.Conn) {
	s, err := New(&Config{Origin: testOrigin, Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	env := &adapters.Env{Log: slog.New(slog.DiscardHandler)} // default heartbeat: 30 s / 90 s
	r := newRun(s, env, runPlace{dir: t.TempDir(), port: 8787})
	s.cur.Store(r)
	srv, cli := net.Pipe()
	go func() {
		req, err := http.ReadRequest(bufio.NewReader(srv))
		if err != nil {
			return
		}
		r.pages.ServeConn(srv, req)
	}()
	pg := &pipePage{pong: pong, msgs: make(chan string, 64), closed: make(chan struct{})}
	hdr := http.Header{"Origin": {testOrigin}}
	c, _, err := gws.NewClientFromConn(pg, &gws.ClientOption{Addr: "ws://127.0.0.1:8787/", RequestHeader: hdr}, cli)
	if err != nil {
		t.Fatal(err)
	}
	go c.ReadLoop()
	c.WriteString(`{"token":"` + testToken + `"}`)
	synctest.Wait()
	if m := <-pg.msgs; !contains(m, `"hello"`) {
		t.Fatalf("no hello: %s", m)
	}
	return s, pg, c
}

// §2.9 with the real timings: a ping every 30 s; 90 s of silence drops the
// page exactly like a close (tools gone, pending call failed).
func TestHeartbeatRealTimings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, pg, c := pipeBridge(t, false) // a sleeping tab: never pongs
		c.WriteString(`{"tools":[{"name":"render"}]}`)
		synctest.Wait()
		var failed []byte
		go func() { failed, _ = s.Call(context.Background(), "render", nil) }()
		synctest.Wait()
		<-pg.msgs // the command frame

		time.Sleep(29 * time.Second)
		synctest.Wait()
		if pg.Pings() != 0 {
			t.Fatalf("pinged before 30 s")
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if pg.Pings() != 1 {
			t.Fatalf("pings at 31 s = %d, want 1", pg.Pings())
		}
		time.Sleep(58 * time.Second) // 89 s of silence
		synctest.Wait()
		if !s.attached() {
			t.Fatal("dropped before 90 s of silence")
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if s.attached() {
			t.Fatal("a silent page still attached after 90 s")
		}
		if tools, _ := s.Tools(); len(tools) != 0 {
			t.Fatal("tools kept")
		}
		if !contains(string(failed), "may or may not have run") {
			t.Fatalf("pending call = %s", failed)
		}
		<-pg.closed
	})
}

func TestHeartbeatPongKeepsPage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, pg, c := pipeBridge(t, true)
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if !s.attached() {
			t.Fatal("a page answering pings was dropped")
		}
		if n := pg.Pings(); n != 20 {
			t.Fatalf("pings in 10 min = %d, want 20", n)
		}
		c.WriteClose(1000, nil)
		synctest.Wait()
		<-pg.closed
	})
}

// The pre-auth deadline with its real 10 s default.
func TestAuthDeadlineRealTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := New(&Config{Origin: testOrigin, Token: testToken})
		if err != nil {
			t.Fatal(err)
		}
		r := newRun(s, &adapters.Env{Log: slog.New(slog.DiscardHandler)}, runPlace{dir: t.TempDir(), port: 8787})
		srv, cli := net.Pipe()
		go func() {
			req, err := http.ReadRequest(bufio.NewReader(srv))
			if err == nil {
				r.pages.ServeConn(srv, req)
			}
		}()
		pg := &pipePage{msgs: make(chan string, 8), closed: make(chan struct{})}
		c, _, err := gws.NewClientFromConn(pg, &gws.ClientOption{Addr: "ws://127.0.0.1:8787/", RequestHeader: http.Header{"Origin": {testOrigin}}}, cli)
		if err != nil {
			t.Fatal(err)
		}
		go c.ReadLoop()
		time.Sleep(9 * time.Second)
		synctest.Wait()
		select {
		case <-pg.closed:
			t.Fatal("closed before 10 s")
		default:
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		<-pg.closed
		if m := <-pg.msgs; !contains(m, "auth_timeout") {
			t.Fatalf("answer %s", m)
		}
	})
}

// §2.7/§2.8 standalone rules with their real durations.
func TestStandaloneIdleRulesRealTimings(t *testing.T) {
	wait := func(lc *hub.Lifecycle) chan error {
		c := make(chan error, 1)
		go func() { c <- lc.Wait(context.Background()) }()
		return c
	}
	fired := func(c chan error) (string, bool) {
		synctest.Wait()
		select {
		case err := <-c:
			var ie *hub.IdleError
			if !errors.As(err, &ie) {
				t.Fatalf("Wait = %v", err)
			}
			return ie.Reason, true
		default:
			return "", false
		}
	}
	t.Run("no page within 30 min", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := wait(hub.NewLifecycle(standaloneRules(NoPageWithin, DefaultAgentIdleMinutes*time.Minute)))
			time.Sleep(29*time.Minute + 59*time.Second)
			if _, ok := fired(c); ok {
				t.Fatal("fired early")
			}
			time.Sleep(2 * time.Second)
			if r, ok := fired(c); !ok || !contains(r, "no page attached") {
				t.Fatalf("fired %v %q", ok, r)
			}
		})
	})
	t.Run("agent idle 120 min even with a page", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			lc := hub.NewLifecycle(standaloneRules(NoPageWithin, DefaultAgentIdleMinutes*time.Minute))
			c := wait(lc)
			time.Sleep(time.Minute)
			lc.PageAttached("stitchslop")
			time.Sleep(59 * time.Minute)
			lc.AgentActivity("stitchslop") // at 60 min
			time.Sleep(119 * time.Minute)
			if _, ok := fired(c); ok {
				t.Fatal("fired before 120 min without an agent")
			}
			time.Sleep(2 * time.Minute)
			if r, ok := fired(c); !ok || !contains(r, "no agent activity") {
				t.Fatalf("fired %v %q", ok, r)
			}
		})
	})
	t.Run("initialize owns the bridge", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			lc := hub.NewLifecycle(standaloneRules(NoPageWithin, DefaultAgentIdleMinutes*time.Minute))
			ctx, cancel := context.WithCancel(context.Background())
			c := make(chan error, 1)
			go func() { c <- lc.Wait(ctx) }()
			time.Sleep(10 * time.Minute)
			lc.Own()
			time.Sleep(48 * time.Hour)
			synctest.Wait()
			select {
			case err := <-c:
				t.Fatalf("idle exit under an MCP owner: %v", err)
			default:
			}
			cancel()
			<-c
		})
	})
}

// Issue 28: the app's plugin long-polls voice.listen for 25 s at a time.
// Beside one such poll, every other call is answered at once (on the fake
// clock, no time passes for them), and the poll still gets its answer.
func TestLongPollBesideOtherCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, pg, c := pipeBridge(t, true)
		answer := func(frame string, extra string) {
			var f struct {
				ID int64 `json:"id"`
			}
			if err := json.Unmarshal([]byte(frame), &f); err != nil || f.ID == 0 {
				t.Fatalf("not a command: %s", frame)
			}
			c.WriteString(fmt.Sprintf(`{"id":%d,"ok":true%s}`, f.ID, extra))
		}
		listened := make(chan []byte, 1)
		go func() {
			out, _ := s.Call(context.Background(), "voice.listen", json.RawMessage(`{"timeoutMs":25000}`))
			listened <- out
		}()
		synctest.Wait()
		poll := <-pg.msgs
		start := time.Now()
		for i := range 5 {
			got := make(chan []byte, 1)
			go func() {
				out, _ := s.Call(context.Background(), "scene.describe", nil)
				got <- out
			}()
			synctest.Wait()
			answer(<-pg.msgs, fmt.Sprintf(`,"n":%d`, i))
			synctest.Wait()
			select {
			case out := <-got:
				if !contains(string(out), fmt.Sprintf(`"n":%d`, i)) {
					t.Fatalf("call %d got %s", i, out)
				}
			default:
				t.Fatalf("call %d waited behind the long poll", i)
			}
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("the calls beside the poll took %s of fake time", d)
		}
		time.Sleep(25 * time.Second)
		answer(poll, `,"heard":"make it red","atMs":25000`)
		synctest.Wait()
		if out := <-listened; !contains(string(out), "make it red") {
			t.Fatalf("the poll got %s", out)
		}
		c.WriteClose(1000, nil)
		synctest.Wait()
		<-pg.closed
	})
}

// Issue 28: a command the tab never answers costs its own caller the
// 60 s timeout and nobody else anything. On the fake clock a fast command
// sent beside it is answered with no time passing, the hung one is still
// waiting a moment before 60 s, and at 60 s it ends "uncertain" on its
// own while the tab stays attached.
func TestNeverAnsweredCommandBesideAFastOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, pg, c := pipeBridge(t, true)
		start := time.Now()
		hung := make(chan []byte, 1)
		go func() {
			out, _ := s.Call(context.Background(), "hang", nil)
			hung <- out
		}()
		synctest.Wait()
		if f := <-pg.msgs; !contains(f, `"command":"hang"`) {
			t.Fatalf("frame %s", f)
		}
		fast := make(chan []byte, 1)
		go func() {
			out, _ := s.Call(context.Background(), "scene.describe", nil)
			fast <- out
		}()
		synctest.Wait()
		var f struct {
			ID int64 `json:"id"`
		}
		json.Unmarshal([]byte(<-pg.msgs), &f)
		c.WriteString(fmt.Sprintf(`{"id":%d,"ok":true,"objects":2}`, f.ID))
		synctest.Wait()
		select {
		case out := <-fast:
			if !contains(string(out), `"objects":2`) || time.Since(start) != 0 {
				t.Fatalf("fast call = %s after %s", out, time.Since(start))
			}
		default:
			t.Fatal("the fast command waited behind the one the tab never answers")
		}
		time.Sleep(DefaultCallTimeout - time.Millisecond)
		synctest.Wait()
		select {
		case out := <-hung:
			t.Fatalf("the never-answered command ended early: %s", out)
		default:
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		select {
		case out := <-hung:
			if !contains(string(out), `"error":"uncertain"`) || !contains(string(out), "did not answer in time") {
				t.Fatalf("never-answered call = %s", out)
			}
		default:
			t.Fatal("the never-answered command outlived its 60 s")
		}
		if _, attached := s.Tools(); !attached {
			t.Fatal("a lost answer dropped the tab")
		}
		c.WriteClose(1000, nil)
		synctest.Wait()
		<-pg.closed
	})
}
