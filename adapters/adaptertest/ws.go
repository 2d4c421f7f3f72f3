package adaptertest

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/ws"
	"github.com/lxzan/gws"
)

// Message is one frame a WSClient received.
type Message struct {
	Opcode gws.Opcode
	Data   []byte
}

// Text returns the payload as a string.
func (m Message) Text() string { return string(m.Data) }

// WSClient is a browser-page stand-in: a gws client that queues every frame
// it receives and records the close.
type WSClient struct {
	Conn *gws.Conn
	// Resp is the upgrade response (also on failure, when available).
	Resp *http.Response

	msgs   chan Message
	closed chan struct{}
	mu     sync.Mutex
	code   uint16
	reason string
	pings  int
	// AutoPong answers pings (as a browser does). Default true.
	autoPong bool
	once     sync.Once
}

// DialOptions choose how the page dials.
type DialOptions struct {
	Origin string      // the Origin header; "" sends none
	Host   string      // overrides the Host header when set
	Header http.Header // extra headers
	// NoPong makes the client ignore pings, like a tab that went to sleep.
	NoPong bool
}

func (o DialOptions) header() http.Header {
	hdr := http.Header{}
	for k, v := range o.Header {
		hdr[k] = append([]string(nil), v...)
	}
	if o.Origin != "" {
		hdr.Set("Origin", o.Origin)
	}
	if o.Host != "" {
		hdr.Set("Host", o.Host)
	}
	return hdr
}

// Dial opens a WebSocket to url ("ws://127.0.0.1:port/path").
func Dial(url string, o DialOptions) (*WSClient, error) {
	c := &WSClient{msgs: make(chan Message, 1024), closed: make(chan struct{}), autoPong: !o.NoPong}
	conn, resp, err := gws.NewClient(c, &gws.ClientOption{
		Addr:               url,
		RequestHeader:      o.header(),
		HandshakeTimeout:   5 * time.Second,
		ReadMaxPayloadSize: 64 << 20,
	})
	c.Resp = resp
	if err != nil {
		return c, err
	}
	c.Conn = conn
	go conn.ReadLoop()
	return c, nil
}

// DialPipe connects a page to ep over net.Pipe instead of a socket, so a
// test can run inside a testing/synctest bubble (real sockets cannot) and
// use an adapter's real timings with a fake clock.
func DialPipe(ep *ws.Endpoint, path string, o DialOptions) (*WSClient, error) {
	srv, cli := net.Pipe()
	go func() {
		req, err := http.ReadRequest(bufio.NewReader(srv))
		if err != nil {
			srv.Close()
			return
		}
		ep.ServeConn(srv, req)
	}()
	c := &WSClient{msgs: make(chan Message, 1024), closed: make(chan struct{}), autoPong: !o.NoPong}
	conn, resp, err := gws.NewClientFromConn(c, &gws.ClientOption{
		Addr:               "ws://" + hub.LoopbackHost + path,
		RequestHeader:      o.header(),
		ReadMaxPayloadSize: 64 << 20,
	}, cli)
	c.Resp = resp
	if err != nil {
		cli.Close()
		return c, err
	}
	c.Conn = conn
	go conn.ReadLoop()
	return c, nil
}

// Dial dials path on the harness's adapter.
func (h *Harness) Dial(path string, o DialOptions) (*WSClient, error) {
	return Dial(h.WSURL(path), o)
}

// MustDial dials and fails the test on error; the client is closed at cleanup.
func (h *Harness) MustDial(path string, o DialOptions) *WSClient {
	h.T.Helper()
	c, err := h.Dial(path, o)
	if err != nil {
		status := 0
		if c.Resp != nil {
			status = c.Resp.StatusCode
		}
		h.T.Fatalf("dial %s: %v (status %d)", path, err, status)
	}
	h.T.Cleanup(c.Close)
	return c
}

// Status is the HTTP status of the upgrade response (0 if none).
func (c *WSClient) Status() int {
	if c.Resp == nil {
		return 0
	}
	return c.Resp.StatusCode
}

// SendText sends a text frame.
func (c *WSClient) SendText(s string) error { return c.Conn.WriteString(s) }

// SendBinary sends a binary frame.
func (c *WSClient) SendBinary(b []byte) error { return c.Conn.WriteMessage(gws.OpcodeBinary, b) }

// ErrTimeout is returned by Next when nothing arrives in time.
var ErrTimeout = errors.New("timed out waiting for a frame")

// ErrClosed is returned by Next when the connection closed first.
var ErrClosed = errors.New("connection closed")

// Next waits up to d for the next frame.
func (c *WSClient) Next(d time.Duration) (Message, error) {
	select {
	case m := <-c.msgs:
		return m, nil
	default:
	}
	select {
	case m := <-c.msgs:
		return m, nil
	case <-c.closed:
		select {
		case m := <-c.msgs:
			return m, nil
		default:
			return Message{}, ErrClosed
		}
	case <-time.After(d):
		return Message{}, ErrTimeout
	}
}

// Closed is closed when the connection ends.
func (c *WSClient) Closed() <-chan struct{} { return c.closed }

// CloseCode returns the close code and reason the server sent (0 if none).
func (c *WSClient) CloseCode() (uint16, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.code, c.reason
}

// Pings is how many pings the client has received.
func (c *WSClient) Pings() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pings
}

// Close closes the connection (idempotent).
func (c *WSClient) Close() {
	if c.Conn != nil {
		c.Conn.WriteClose(1000, nil)
		c.Conn.NetConn().Close()
	}
}

// gws.Event implementation.

func (c *WSClient) OnOpen(*gws.Conn) {}

func (c *WSClient) OnClose(_ *gws.Conn, err error) {
	c.mu.Lock()
	var ce *gws.CloseError
	if errors.As(err, &ce) {
		c.code, c.reason = ce.Code, string(ce.Reason)
	}
	c.mu.Unlock()
	c.once.Do(func() { close(c.closed) })
}

func (c *WSClient) OnPing(conn *gws.Conn, payload []byte) {
	c.mu.Lock()
	c.pings++
	c.mu.Unlock()
	if c.autoPong {
		conn.WritePong(payload)
	}
}

func (c *WSClient) OnPong(*gws.Conn, []byte) {}

func (c *WSClient) OnMessage(_ *gws.Conn, m *gws.Message) {
	data := append([]byte(nil), m.Bytes()...)
	op := m.Opcode
	m.Close()
	select {
	case c.msgs <- Message{Opcode: op, Data: data}:
	default: // a test that reads nothing must not wedge the read loop
	}
}
