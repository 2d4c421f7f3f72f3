package bench

import (
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/lxzan/gws"
)

// wsConn is a WebSocket client: frames go to answer when it is set (on
// the read goroutine, as a scripted page answers at once), else to In.
type wsConn struct {
	gws.BuiltinEventHandler
	c      *gws.Conn
	In     chan []byte
	answer atomic.Pointer[func(msg []byte) []byte]
	closed chan struct{}
}

// dialWS connects to url with the Origin header origin ("" sends none).
func dialWS(url, origin string, answer func([]byte) []byte) (*wsConn, error) {
	w := &wsConn{In: make(chan []byte, 64), closed: make(chan struct{})}
	w.Answer(answer)
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	c, _, err := gws.NewClient(w, &gws.ClientOption{Addr: url, RequestHeader: h,
		ReadMaxPayloadSize: 64 << 20, WriteMaxPayloadSize: 64 << 20, HandshakeTimeout: 10 * time.Second})
	if err != nil {
		return nil, err
	}
	w.c = c
	go c.ReadLoop()
	return w, nil
}

func (w *wsConn) OnClose(*gws.Conn, error) { close(w.closed) }

func (w *wsConn) OnPing(c *gws.Conn, p []byte) { c.WritePong(p) }

func (w *wsConn) OnMessage(c *gws.Conn, m *gws.Message) {
	data := append([]byte(nil), m.Bytes()...)
	m.Close()
	if answer := w.answer.Load(); answer != nil {
		if reply := (*answer)(data); reply != nil {
			c.WriteMessage(gws.OpcodeText, reply)
		}
		return
	}
	select {
	case w.In <- data:
	case <-w.closed:
	}
}

// Answer sets (nil: clears) the function that answers every frame from
// now on, on the read goroutine; unanswered frames go to In.
func (w *wsConn) Answer(answer func([]byte) []byte) {
	if answer == nil {
		w.answer.Store(nil)
		return
	}
	w.answer.Store(&answer)
}

// Send writes one text frame.
func (w *wsConn) Send(s string) error { return w.c.WriteMessage(gws.OpcodeText, []byte(s)) }

// SendBinary writes one binary frame.
func (w *wsConn) SendBinary(b []byte) error { return w.c.WriteMessage(gws.OpcodeBinary, b) }

var errClosed = errors.New("bench: the socket closed")

// Next is the next frame (when answer is nil), waiting at most d.
func (w *wsConn) Next(d time.Duration) ([]byte, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case m := <-w.In:
		return m, nil
	case <-w.closed:
		select {
		case m := <-w.In:
			return m, nil
		default:
		}
		return nil, errClosed
	case <-t.C:
		return nil, errors.New("bench: no frame in " + d.String())
	}
}

// Close closes the socket.
func (w *wsConn) Close() { w.c.NetConn().Close() }
