package bench

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
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

// rawWS is a WebSocket client for loads that send big frames: it writes
// frames it built and masked once (see maskedFrame), so a frame costs the
// harness one write, not a copy, a mask and an allocation, and it reads
// the server's frames on the caller's goroutine, so an answer wakes no
// second goroutine. The load then measures the server, not the harness.
// Not safe for concurrent use.
type rawWS struct {
	c    net.Conn
	br   *bufio.Reader
	key  [4]byte // every frame's masking key
	buf  []byte  // the last frame Next read
	pong []byte
}

// wsGUID is RFC 6455's handshake constant.
const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// dialRawWS connects to rawURL (ws://host:port/path) with the Origin
// header origin ("" sends none).
func dialRawWS(rawURL, origin string) (*rawWS, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "ws" {
		return nil, fmt.Errorf("bench: not a ws:// URL: %q", rawURL)
	}
	c, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		return nil, err
	}
	w := &rawWS{c: c, br: bufio.NewReaderSize(c, 4<<10)}
	if err := w.handshake(u, origin); err != nil {
		c.Close()
		return nil, err
	}
	return w, nil
}

func (w *rawWS) handshake(u *url.URL, origin string) error {
	var nonce [16]byte
	rand.Read(nonce[:])
	rand.Read(w.key[:])
	key := base64.StdEncoding.EncodeToString(nonce[:])
	req := &http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}}
	var b strings.Builder
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n", u.RequestURI(), u.Host, key)
	if origin != "" {
		fmt.Fprintf(&b, "Origin: %s\r\n", origin)
	}
	b.WriteString("\r\n")
	w.c.SetDeadline(time.Now().Add(10 * time.Second))
	defer w.c.SetDeadline(time.Time{})
	if _, err := io.WriteString(w.c, b.String()); err != nil {
		return err
	}
	resp, err := http.ReadResponse(w.br, req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	sum := sha1.Sum([]byte(key + wsGUID))
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		return fmt.Errorf("bench: WebSocket handshake refused: %s", resp.Status)
	}
	return nil
}

// maskedFrame is one whole client frame (fin set) of opcode op carrying
// payload, masked with w's key; its payload starts at frameHeaderLen (see
// patch).
func (w *rawWS) maskedFrame(op byte, payload []byte) []byte {
	n := len(payload)
	out := make([]byte, 0, 14+n) // the longest header: 10 bytes and the key
	out = append(out, 0x80|op)
	switch {
	case n < 126:
		out = append(out, 0x80|byte(n))
	case n <= 0xFFFF:
		out = append(out, 0x80|126)
		out = binary.BigEndian.AppendUint16(out, uint16(n))
	default:
		out = append(out, 0x80|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	out = append(out, w.key[:]...)
	start := len(out)
	out = append(out, payload...)
	for i := range payload {
		out[start+i] ^= w.key[i&3]
	}
	return out
}

// patch overwrites the payload bytes of frame (built by maskedFrame) at
// off with b, masked.
func (w *rawWS) patch(frame []byte, off int, b []byte) {
	h := frameHeaderLen(frame)
	for i, c := range b {
		frame[h+off+i] = c ^ w.key[(off+i)&3]
	}
}

// frameHeaderLen is the header length of a masked client frame.
func frameHeaderLen(frame []byte) int {
	switch frame[1] & 0x7F {
	case 126:
		return 4 + 4
	case 127:
		return 10 + 4
	}
	return 2 + 4
}

// Write sends frames (each whole, from maskedFrame) as they are.
func (w *rawWS) Write(frame []byte) error {
	_, err := w.c.Write(frame)
	return err
}

// maxRawFrame bounds a frame Next reads.
const maxRawFrame = 1 << 20

// Next is the next text or binary frame's payload (valid until the next
// call), waiting at most d; it answers pings on the way.
func (w *rawWS) Next(d time.Duration) ([]byte, error) {
	w.c.SetReadDeadline(time.Now().Add(d))
	for {
		var h [2]byte
		if _, err := io.ReadFull(w.br, h[:]); err != nil {
			return nil, err
		}
		if h[1]&0x80 != 0 {
			return nil, errors.New("bench: the server masked a frame")
		}
		n := uint64(h[1] & 0x7F)
		switch n {
		case 126:
			var e [2]byte
			if _, err := io.ReadFull(w.br, e[:]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(e[:]))
		case 127:
			var e [8]byte
			if _, err := io.ReadFull(w.br, e[:]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(e[:])
		}
		if n > maxRawFrame {
			return nil, fmt.Errorf("bench: a %d-byte frame", n)
		}
		if uint64(cap(w.buf)) < n {
			w.buf = make([]byte, n)
		}
		w.buf = w.buf[:n]
		if _, err := io.ReadFull(w.br, w.buf); err != nil {
			return nil, err
		}
		switch op := h[0] & 0x0F; {
		case h[0]&0x80 == 0 || op == 0:
			return nil, errors.New("bench: a fragmented frame")
		case op == 1 || op == 2:
			return w.buf, nil
		case op == 8:
			return nil, errClosed
		case op == 9:
			w.pong = w.maskedFrame(0xA, w.buf)
			if err := w.Write(w.pong); err != nil {
				return nil, err
			}
		}
	}
}

// Close closes the socket.
func (w *rawWS) Close() { w.c.Close() }
