package pixelle

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/lxzan/gws"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/portowner"
)

// clientReadLimit bounds one frame the agent client accepts: a 2 MiB
// browser result plus the relay's wrapper.
const clientReadLimit = 4 << 20

// wsConn is a minimal synchronous WebSocket client over gws.
type wsConn struct {
	conn   *gws.Conn
	msgs   chan []byte
	closed chan struct{}
	once   sync.Once
	mu     sync.Mutex
	code   uint16
	reason string
	done   chan struct{} // read loop finished
}

// dialRelay opens ws://127.0.0.1:PORT/relay without an Origin (a native
// client), through d: the hello that follows carries the agent token, so
// a port another user holds is refused before a byte is sent (exit 3, see
// dialErr). A refused TCP connection is "relay not reachable" (exit 3).
func dialRelay(ctx context.Context, relay string, d *portowner.Dialer) (*wsConn, error) {
	w := &wsConn{msgs: make(chan []byte, 64), closed: make(chan struct{}), done: make(chan struct{})}
	host := strings.TrimPrefix(relay, "http://")
	timeout := 5 * time.Second
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = time.Until(dl)
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	nc, err := d.DialContext(dctx, "tcp", host)
	cancel()
	if err != nil {
		return nil, dialErr(relay, err)
	}
	conn, resp, err := gws.NewClientFromConn(w, &gws.ClientOption{
		Addr:               "ws://" + host + "/relay",
		HandshakeTimeout:   timeout,
		ReadMaxPayloadSize: clientReadLimit,
		CheckUtf8Enabled:   true,
	}, nc)
	if err != nil {
		if resp != nil {
			return nil, failErr("RELAY_REFUSED", "the relay refused the WebSocket (HTTP %d)", resp.StatusCode)
		}
		return nil, failErr("RELAY_REFUSED", "WebSocket handshake with %s failed: %v", relay, err)
	}
	w.conn = conn
	// Under ctx's guard when the client runs inside a guarded run; in the
	// shell client and hub mcp there is none and it runs plainly.
	hub.Go(ctx, "pixelle client read loop", func() {
		defer close(w.done)
		conn.ReadLoop()
	})
	return w, nil
}

func (w *wsConn) send(b []byte) error { return w.conn.WriteMessage(gws.OpcodeText, b) }

// next waits for the next text frame.
func (w *wsConn) next(ctx context.Context) ([]byte, error) {
	select {
	case m := <-w.msgs:
		return m, nil
	default:
	}
	select {
	case m := <-w.msgs:
		return m, nil
	case <-w.closed:
		select {
		case m := <-w.msgs:
			return m, nil
		default:
		}
		return nil, errConnClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

var errConnClosed = errors.New("connection closed")

// authError explains a failure before ready.
func (w *wsConn) authError(err error) error {
	w.mu.Lock()
	code, reason := w.code, w.reason
	w.mu.Unlock()
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return failErr("RELAY_TIMEOUT", "the relay did not answer the hello in time")
	case code == closePolicy:
		return failErr("CREDENTIALS_REJECTED", "the relay rejected the stored credentials (%s): the pairing was revoked, replaced, expired or the relay restarted; ask for a new pairing code and run `hub pixelle pair CODE`", reason)
	default:
		return failErr("RELAY_CLOSED", "the relay closed the connection before ready (code %d %s)", code, reason)
	}
}

// close ends the connection and waits for the read loop.
func (w *wsConn) close() {
	_ = w.conn.WriteClose(1000, nil)
	_ = w.conn.NetConn().Close()
	<-w.done
}

func (w *wsConn) OnOpen(*gws.Conn) {}

func (w *wsConn) OnClose(_ *gws.Conn, err error) {
	var ce *gws.CloseError
	w.mu.Lock()
	if errors.As(err, &ce) {
		w.code, w.reason = ce.Code, string(ce.Reason)
	}
	w.mu.Unlock()
	w.once.Do(func() { close(w.closed) })
}

func (w *wsConn) OnPing(c *gws.Conn, p []byte) { _ = c.WritePong(p) }
func (w *wsConn) OnPong(*gws.Conn, []byte)     {}

func (w *wsConn) OnMessage(_ *gws.Conn, m *gws.Message) {
	defer m.Close()
	if m.Opcode != gws.OpcodeText {
		return
	}
	b := append([]byte(nil), m.Bytes()...)
	select {
	case w.msgs <- b:
	default: // a flood of unrelated frames cannot wedge the read loop
	}
}
