package intent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lxzan/gws"

	"github.com/hubdev/hub/hub"
)

// realtimeQueue bounds the audio queued while the upstream handshake runs
// (at 24 kHz PCM16 a browser frame is ~10–100 ms; 4096 frames is minutes).
// realtimeQueueBytes bounds the same queue in bytes (base64 JSON): a frame
// may be as large as a /ws frame, and a page sending faster than the
// upstream reads would otherwise hold the whole turn's audio in memory,
// a third again as large. 4 MiB is over a minute of 24 kHz PCM16.
const (
	realtimeQueue      = 4096
	realtimeQueueBytes = 4 << 20
)

// RealtimeURL derives the GA realtime transcription endpoint from a REST
// base: https://api.openai.com/v1 → wss://api.openai.com/v1/realtime?intent=transcription.
func RealtimeURL(base string) string {
	u := strings.TrimRight(base, "/")
	switch {
	case strings.HasPrefix(u, "https://"):
		u = "wss://" + u[len("https://"):]
	case strings.HasPrefix(u, "http://"):
		u = "ws://" + u[len("http://"):]
	}
	return u + "/realtime?intent=transcription"
}

// OpenAIRealtime dials the GA realtime transcription endpoint under base:
// Bearer auth only (no beta header), one session.update with a nested
// session.type "transcription" (audio/pcm at 24 kHz, the model and
// optional delay, turn_detection null), input_audio_buffer.append per
// audio frame, input_audio_buffer.commit per talk-end, and the
// .delta/.completed transcription events back, correlated by item_id.
func OpenAIRealtime(base string) RealtimeDialer {
	return func(ctx context.Context, key, model, delay string, ev RealtimeEvents) (RealtimeSession, error) {
		if key == "" {
			return nil, ErrNoKey
		}
		s := &rtSession{ev: ev, out: make(chan []byte, realtimeQueue), items: map[string]int{}, text: map[string]string{},
			pending: map[int]bool{}, early: map[int]string{}, seen: map[int]bool{}, done: make(chan struct{})}
		hub.Go(ctx, "realtime session", func() { s.run(ctx, RealtimeURL(base), key, model, delay) })
		return s, nil
	}
}

type rtSession struct {
	ev   RealtimeEvents
	out  chan []byte
	done chan struct{}

	mu      sync.Mutex
	raw     net.Conn // the dialed socket, closed by Close during a handshake
	conn    *gws.Conn
	closed  bool
	err     error
	queue   []int          // segments with audio but no upstream item yet
	seen    map[int]bool   // segments that sent audio
	items   map[string]int // item_id → segment
	text    map[string]string
	pending map[int]bool   // committed, final not yet delivered
	early   map[int]string // finals that arrived before their commit
	last    int
	queued  int // bytes in out (realtimeQueueBytes)
}

func (s *rtSession) enqueue(v any) error {
	b, _ := json.Marshal(v)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if s.closed {
		return errors.New("realtime session closed")
	}
	if s.queued+len(b) > realtimeQueueBytes {
		return fmt.Errorf("realtime upstream is not keeping up (more than %d bytes of audio queued)", realtimeQueueBytes)
	}
	select {
	case s.out <- b:
		s.queued += len(b)
		return nil
	default:
		return errors.New("realtime upstream is not keeping up (audio queue full)")
	}
}

// dequeued gives back the queue bytes of a message taken from out.
func (s *rtSession) dequeued(b []byte) {
	s.mu.Lock()
	s.queued -= len(b)
	s.mu.Unlock()
}

func (s *rtSession) Append(segment int, pcm []byte) error {
	s.mu.Lock()
	if !s.seen[segment] {
		s.seen[segment] = true
		s.queue = append(s.queue, segment)
	}
	s.last = segment
	s.mu.Unlock()
	return s.enqueue(map[string]any{"type": "input_audio_buffer.append", "audio": base64.StdEncoding.EncodeToString(pcm)})
}

func (s *rtSession) Commit(segment int) error {
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return err
	}
	if text, ok := s.early[segment]; ok {
		delete(s.early, segment)
		s.mu.Unlock()
		s.ev.Final(segment, text, nil)
		return nil
	}
	s.pending[segment] = true
	s.mu.Unlock()
	if err := s.enqueue(map[string]any{"type": "input_audio_buffer.commit"}); err != nil {
		s.mu.Lock()
		delete(s.pending, segment)
		s.mu.Unlock()
		return err
	}
	return nil
}

// rtWriteTimeout bounds one write to the upstream: one that stopped
// reading fails the session loudly (each pending segment gets its failed
// final) instead of holding its writer forever. rtCloseWait bounds what
// Close waits for a write in progress and for its close frame.
const (
	rtWriteTimeout = 10 * time.Second
	rtCloseWait    = time.Second
)

// write sends one message within rtWriteTimeout. After Close it writes
// nothing and reports errSessionClosed, so a write Close cut short is not
// taken for an upstream failure.
func (s *rtSession) write(conn *gws.Conn, b []byte) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errSessionClosed
	}
	conn.SetWriteDeadline(time.Now().Add(rtWriteTimeout))
	s.mu.Unlock()
	err := conn.WriteMessage(gws.OpcodeText, b)
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return errSessionClosed
	}
	return err
}

// errSessionClosed ends segments still waiting for their transcript when
// the session closes.
var errSessionClosed = errors.New("realtime session closed before the transcript arrived")

// Close closes the upstream socket; it is idempotent. Segments committed
// but not yet transcribed get their failed final, so every commit is
// balanced by exactly one final.
func (s *rtSession) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.out)
	c, raw := s.conn, s.raw
	s.mu.Unlock()
	if c != nil {
		// A writer blocked on an upstream that stopped reading holds the
		// socket's write lock: the deadline ends its write (run sees closed
		// and writes nothing more), so the close frame, bounded the same
		// way, can go out and Close returns.
		c.SetWriteDeadline(time.Now().Add(rtCloseWait))
		c.WriteClose(1000, nil)
		c.NetConn().Close()
	} else if raw != nil {
		raw.Close() // unblocks a handshake in progress
	}
	s.fail(errSessionClosed)
	return nil
}

// sessionDialer dials the upstream with ctx and hands the socket to the
// session, so Close (or ctx) can abort a handshake that hangs on a slow
// network instead of waiting out the handshake timeout.
type sessionDialer struct {
	ctx context.Context
	s   *rtSession
}

func (d sessionDialer) Dial(network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{Timeout: 10 * time.Second}).DialContext(d.ctx, network, addr)
	if err != nil {
		return nil, err
	}
	d.s.mu.Lock()
	closed := d.s.closed
	d.s.raw = c
	d.s.mu.Unlock()
	if closed {
		c.Close()
		return nil, errors.New("realtime session closed")
	}
	return c, nil
}

// fail ends every pending segment with err (each gets its loud final).
func (s *rtSession) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	var segs []int
	for seg := range s.pending {
		segs = append(segs, seg)
	}
	clear(s.pending)
	s.mu.Unlock()
	for _, seg := range segs {
		s.ev.Final(seg, "", err)
	}
}

func (s *rtSession) run(ctx context.Context, url, key, model, delay string) {
	defer close(s.done)
	hdr := http.Header{"Authorization": {"Bearer " + key}}
	g := hub.GuardFrom(ctx) // the seams' context carries the backend's guard
	stop := context.AfterFunc(ctx, func() {
		defer g.Recover("realtime dial cancel")
		s.mu.Lock()
		raw, up := s.raw, s.conn
		s.mu.Unlock()
		if raw != nil && up == nil {
			raw.Close()
		}
	})
	conn, _, err := gws.NewClient(s, &gws.ClientOption{Addr: url, RequestHeader: hdr, HandshakeTimeout: 10 * time.Second,
		ReadMaxPayloadSize: 1 << 20, NewDialer: func() (gws.Dialer, error) { return sessionDialer{ctx: ctx, s: s}, nil }})
	stop()
	if err != nil {
		s.fail(fmt.Errorf("realtime handshake failed: %v", err))
		return
	}
	s.mu.Lock()
	s.conn = conn
	closed := s.closed
	s.mu.Unlock()
	if closed {
		conn.NetConn().Close()
		return
	}
	hub.Go(ctx, "realtime read loop", conn.ReadLoop)
	transcription := map[string]any{"model": model}
	if delay != "" {
		transcription["delay"] = delay
	}
	update, _ := json.Marshal(map[string]any{"type": "session.update", "session": map[string]any{
		"type": "transcription",
		"audio": map[string]any{"input": map[string]any{
			"format":         map[string]any{"type": "audio/pcm", "rate": 24000},
			"transcription":  transcription,
			"turn_detection": nil,
		}},
	}})
	if err := s.write(conn, update); err != nil {
		if err != errSessionClosed {
			s.fail(fmt.Errorf("realtime session.update failed: %v", err))
		}
		return
	}
	for {
		select {
		case <-ctx.Done():
			s.Close()
			return
		case b, ok := <-s.out:
			if !ok {
				return
			}
			s.dequeued(b)
			if err := s.write(conn, b); err != nil {
				if err != errSessionClosed {
					s.fail(fmt.Errorf("realtime upstream write failed: %v", err))
				}
				return
			}
		}
	}
}

// segFor maps an upstream item to the oldest segment with audio and no
// item yet. Caller holds mu.
func (s *rtSession) segFor(item string) int {
	if seg, ok := s.items[item]; ok {
		return seg
	}
	seg := s.last
	if len(s.queue) > 0 {
		seg, s.queue = s.queue[0], s.queue[1:]
	}
	s.items[item] = seg
	return seg
}

// gws.Event for the upstream socket.

func (s *rtSession) OnOpen(*gws.Conn)             {}
func (s *rtSession) OnPing(c *gws.Conn, p []byte) { c.WritePong(p) }
func (s *rtSession) OnPong(*gws.Conn, []byte)     {}

func (s *rtSession) OnClose(_ *gws.Conn, err error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if !closed {
		s.fail(fmt.Errorf("realtime upstream closed: %v", err))
	}
}

func (s *rtSession) OnMessage(_ *gws.Conn, m *gws.Message) {
	defer m.Close()
	var ev struct {
		Type       string `json:"type"`
		ItemID     string `json:"item_id"`
		Delta      string `json:"delta"`
		Transcript string `json:"transcript"`
		Error      *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(m.Bytes(), &ev) != nil {
		return
	}
	switch ev.Type {
	case "conversation.item.input_audio_transcription.delta":
		s.mu.Lock()
		seg := s.segFor(ev.ItemID)
		s.text[ev.ItemID] += ev.Delta
		text := s.text[ev.ItemID]
		s.mu.Unlock()
		if s.ev.Delta != nil {
			s.ev.Delta(seg, text)
		}
	case "conversation.item.input_audio_transcription.completed":
		s.mu.Lock()
		seg := s.segFor(ev.ItemID)
		pending := s.pending[seg]
		delete(s.pending, seg)
		if !pending {
			s.early[seg] = ev.Transcript
		}
		s.mu.Unlock()
		if pending {
			s.ev.Final(seg, ev.Transcript, nil)
		}
	case "error":
		msg := "unknown upstream error"
		if ev.Error != nil && ev.Error.Message != "" {
			msg = ev.Error.Message
		}
		s.fail(fmt.Errorf("realtime upstream error: %s", msg))
	}
}
