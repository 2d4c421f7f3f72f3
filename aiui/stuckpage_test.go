//go:build unix

package aiui

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lxzan/gws"

	"github.com/hubdev/hub/aiui/tools"
)

// stuckPage is a /tools page whose event loop hangs after registering: it
// stops reading its socket, so the server's writes back up.
type stuckPage struct {
	registered chan struct{}
	release    chan struct{}
	once       sync.Once
}

func (p *stuckPage) OnOpen(*gws.Conn)             {}
func (p *stuckPage) OnClose(*gws.Conn, error)     {}
func (p *stuckPage) OnPing(c *gws.Conn, b []byte) {}
func (p *stuckPage) OnPong(*gws.Conn, []byte)     {}
func (p *stuckPage) OnMessage(_ *gws.Conn, m *gws.Message) {
	m.Close()
	p.once.Do(func() { close(p.registered) })
	<-p.release
}

// TestCallTimeoutCoversAStuckPage: the page-tool call timeout bounds the
// whole call, including handing the call to a page that stopped reading
// its socket — the agent gets its timeout error instead of hanging until
// the heartbeat notices the page.
func TestCallTimeoutCoversAStuckPage(t *testing.T) {
	h, _ := start(t, func(c *Config, _ *Server) { c.CallTimeoutMS = 300 })
	p := &stuckPage{registered: make(chan struct{}), release: make(chan struct{})}
	// a small receive buffer, so little data backs the socket up
	dialer := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10) })
	}}
	conn, _, err := gws.NewClient(p, &gws.ClientOption{Addr: h.WSURL("/tools"), ReadBufferSize: 4 << 10,
		NewDialer: func() (gws.Dialer, error) { return dialer, nil }})
	if err != nil {
		t.Fatal(err)
	}
	go conn.ReadLoop()
	defer conn.NetConn().Close()
	defer close(p.release)
	conn.WriteString(`{"v":1,"type":"register","ns":"stuck","hash":"h","tools":[{"name":"big","description":"d"}]}`)
	<-p.registered
	cl := control(t, h)
	// Megabytes of calls, enough to fill the server's send buffer (which
	// grows to tcp_wmem's maximum, 4 MiB by default) behind the page's
	// small receive buffer.
	args, _ := json.Marshal(map[string]string{"blob": strings.Repeat("x", 1<<20)})
	const calls = 8
	errs := make(chan string, calls)
	for range calls {
		go func() {
			res, err := cl.Call(context.Background(), tools.CallRequest{Name: "big", Args: args})
			if err != nil {
				errs <- err.Error()
				return
			}
			errs <- res.Error
		}()
	}
	// Every call ends, in the call timeout's error or, once the write
	// bound (the call timeout too) drops the stuck page, in the drop's.
	// The deadline only keeps a hang from running into the test binary's
	// timeout (a call's megabytes of JSON are parsed before its timeout
	// starts); that the timeout covers the stuck write exactly is
	// tools.TestCallTimeoutCoversAStuckSend's.
	deadline := time.After(2 * time.Minute)
	for i := range calls {
		select {
		case e := <-errs:
			if !strings.Contains(e, "did not answer within 300ms") && !strings.Contains(e, "page disconnected before answering") {
				t.Fatalf("call %d to a stuck page ended with %q, want the call timeout's error or the page's drop", i, e)
			}
		case <-deadline:
			t.Fatalf("only %d of %d calls to a stuck page returned; the rest hang past the %s call timeout", i, calls, 300*time.Millisecond)
		}
	}
}
