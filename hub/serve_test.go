package hub

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/lxzan/gws"
)

type echoHandler struct {
	gws.BuiltinEventHandler
	conns *ConnSet
}

func (h *echoHandler) OnClose(c *gws.Conn, _ error) { h.conns.Remove(c) }

type clientHandler struct {
	gws.BuiltinEventHandler
	closed chan error
}

func (h *clientHandler) OnClose(_ *gws.Conn, err error) { h.closed <- err }

// TestServeHTTPClosesHijackedConns checks the thing http.Server.Shutdown
// does not do: WebSocket connections are closed with 1001 on shutdown.
func TestServeHTTPClosesHijackedConns(t *testing.T) {
	ln, port, err := Listen([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	conns := &ConnSet{}
	up := gws.NewUpgrader(&echoHandler{conns: conns}, nil)
	mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r)
		if err != nil {
			return
		}
		if !conns.Add(c) {
			return
		}
		go c.ReadLoop()
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeHTTP(ctx, ln, mux, conns, slog.New(slog.NewTextHandler(io.Discard, nil))) }()

	ch := &clientHandler{closed: make(chan error, 1)}
	c, _, err := gws.NewClient(ch, &gws.ClientOption{Addr: "ws://127.0.0.1:" + itoa(port) + "/"})
	if err != nil {
		t.Fatal(err)
	}
	go c.ReadLoop()
	for conns.Len() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case err := <-ch.closed:
		var ce *gws.CloseError
		if !errors.As(err, &ce) || ce.Code != 1001 {
			t.Fatalf("client closed with %v, want close code 1001", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("client never saw the shutdown")
	}
	if err := <-done; err != nil {
		t.Fatalf("ServeHTTP = %v", err)
	}
	if conns.Add(c) {
		t.Fatal("ConnSet accepted a connection after CloseAll")
	}
}

func itoa(n int) string { return FormatPorts([]int{n}) }
