package ws

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/rawio"
	"github.com/lxzan/gws"
)

// A Handler serves one kind of WebSocket (a page socket, a /tools socket,
// a relay peer). Open runs on the socket's read goroutine before the first
// frame is read and returns the connection's session; nil refuses the
// socket (it is dropped).
type Handler interface {
	Open(c *Conn) Session
}

// A Session is one connection's protocol state. Its methods run on the
// socket's read goroutine, one at a time. The heartbeat has already seen
// every frame; Message must not keep m's bytes after it returns (the
// buffer is recycled). Closed runs once, for a close frame, a dead
// heartbeat, a read error or shutdown alike.
type Session interface {
	Message(m *gws.Message)
	Closed(err error)
}

// Options configure one endpoint.
type Options struct {
	// MaxPayload bounds one message once the socket has authenticated (gws
	// allocates a frame's payload as soon as it has read the header, so
	// this is also the per-frame allocation).
	MaxPayload int
	// PreAuth guards the socket until its session calls Authenticated.
	PreAuth PreAuth
	// MaxSockets caps the endpoint's authenticated sockets (default
	// DefaultMaxSockets): when one more authenticates, the one that has
	// been silent the longest is closed to make room (see
	// Conn.Authenticated).
	MaxSockets int
	// Budget bounds the large messages all sockets sharing it receive at
	// once after authentication (nil: a budget of its own for the endpoint,
	// twice MaxPayload); BudgetWait is how long a message waits for room
	// (default hub.DefaultBudgetWait) before its socket is closed with 1013.
	Budget     *hub.Budget
	BudgetWait time.Duration
	Heartbeat  HeartbeatConfig
	// WriteTimeout bounds one frame write (default 10 s), so a peer that
	// stopped reading cannot wedge a writer.
	WriteTimeout time.Duration
	Log          *slog.Logger
}

// Sockets owns the WebSockets of one server run: every upgraded connection
// is tracked (http.Server.Shutdown does not know hijacked connections) and
// its read loop is counted, so a server returns only after every socket's
// close path ran.
type Sockets struct {
	mu     sync.Mutex
	conns  map[*Conn]struct{}
	closed bool
	loops  sync.WaitGroup
	guard  atomic.Pointer[hub.Guard] // handlers' panics go here (ServeHTTP sets it)
}

// SetGuard makes g handle a panic in any handler callback of these
// sockets; ServeHTTP does it with its context's guard.
func (s *Sockets) SetGuard(g *hub.Guard) { s.guard.Store(g) }

// Endpoint makes an endpoint that serves h with o. Text frames must be
// valid UTF-8 on every endpoint (RFC 6455 §8.1).
func (s *Sockets) Endpoint(h Handler, o Options) *Endpoint {
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	o.PreAuth = o.PreAuth.withDefaults()
	if o.MaxSockets <= 0 {
		o.MaxSockets = DefaultMaxSockets
	}
	if o.Budget == nil && o.MaxPayload > hub.BudgetFloor {
		o.Budget = hub.NewBudget(2 * int64(o.MaxPayload))
	}
	if o.BudgetWait <= 0 {
		o.BudgetWait = hub.DefaultBudgetWait
	}
	e := &Endpoint{s: s, h: h, opts: o}
	e.up = gws.NewUpgrader(&wsEvents{e: e}, &gws.ServerOption{
		ReadMaxPayloadSize: o.MaxPayload,
		CheckUtf8Enabled:   true,
		Recovery:           gws.Recovery,
		Logger:             gwsLogger{o.Log},
	})
	return e
}

// Endpoint upgrades requests for one handler.
type Endpoint struct {
	s    *Sockets
	h    Handler
	opts Options
	up   *gws.Upgrader
	live atomic.Int64
	// pending counts sockets holding an unauthenticated slot (PreAuth).
	pending atomic.Int64
	thin    hub.LogThinner

	// The authenticated sockets (MaxSockets), and the counter that orders
	// their messages.
	amu    sync.Mutex
	authed map[*Conn]struct{}
	msgs   atomic.Uint64
}

// Len is the number of live sockets of this endpoint.
func (e *Endpoint) Len() int { return int(e.live.Load()) }

// Serve upgrades r and runs the socket on its own goroutine. The caller
// has already checked Host and Origin, so its refusals are real HTTP
// statuses rather than gws's 400. An upgrade over the endpoint's cap of
// unauthenticated sockets is refused with 503 (PreAuth.MaxPending).
func (e *Endpoint) Serve(w http.ResponseWriter, r *http.Request) {
	s := e.s
	if !e.admit() {
		e.refuseCrowded(w, r)
		return
	}
	// Counted before the hijack, while the HTTP server still waits for
	// this request, so Wait cannot miss a socket being born.
	s.loops.Add(1)
	hj, ok := w.(http.Hijacker)
	if !ok {
		e.pending.Add(-1)
		s.loops.Done()
		hub.WriteJSON(w, http.StatusInternalServerError, map[string]any{"ok": false, "error": "internal", "message": "cannot take over the connection"})
		return
	}
	netConn, _, err := hj.Hijack()
	if err != nil {
		e.pending.Add(-1)
		s.loops.Done()
		e.opts.Log.Debug("hijack failed", "err", err)
		return
	}
	e.serveConn(netConn, r)
}

// ServeConn upgrades a connection accepted some other way (a net.Pipe in a
// synctest bubble) and runs it like Serve.
func (e *Endpoint) ServeConn(netConn net.Conn, r *http.Request) {
	if !e.admit() {
		resp := &connResponse{hdr: http.Header{}}
		e.refuseCrowded(resp, r)
		resp.send(netConn)
		netConn.Close()
		return
	}
	e.s.loops.Add(1)
	e.serveConn(netConn, r)
}

// serveConn upgrades netConn and starts its read loop; the caller has
// raised the loop count and taken an unauthenticated slot.
func (e *Endpoint) serveConn(netConn net.Conn, r *http.Request) {
	s := e.s
	c := &Conn{ep: e, header: r.Header, seen: make(chan struct{}, 1)}
	c.slot.Store(true)
	if wb, ok := rawio.Bounder(netConn); ok {
		// Writes gws makes on its own (the handshake's answer, a close
		// after a protocol error) are bounded like frames.
		wb.BoundWrites(e.opts.WriteTimeout)
		c.wb = wb
	}
	c.pre = newGuardReader(netConn, uint64(e.opts.PreAuth.Limit), e.opts.Budget, e.opts.BudgetWait, e.opts.MaxPayload)
	if h, ok := rawio.Holder(netConn); ok {
		// Replies to messages a peer sent back to back leave in one
		// write; the reader sends them before it waits, for input or
		// for room in the budget.
		c.held = h
		c.pre.beforeWait = h.Flush
	}
	c.pre.onTooBig = func() {
		if f := e.opts.PreAuth.OnTooLarge; f != nil {
			f(c)
		} else {
			e.thin.Warn(e.opts.Log, "too large", "closing a socket whose message before authentication is too large",
				"limit", e.opts.PreAuth.Limit)
		}
		c.Close(1009, "message too large before authentication")
	}
	c.pre.onShort = func(err error) {
		switch {
		case errors.Is(err, hub.ErrBudgetWait):
			e.thin.Warn(e.opts.Log, "budget", "closing a socket whose large message found no room in the receive budget in time",
				"wait", e.opts.BudgetWait)
			c.Close(1013, "server busy: no room for a large message, try again later")
		case errors.Is(err, hub.ErrBudgetTooLarge):
			c.Close(1009, "message larger than the receive budget")
		}
	}
	gc, err := e.up.UpgradeFromConn(c.pre, bufio.NewReaderSize(c.pre, 4<<10), r)
	if err != nil {
		c.releaseSlot()
		s.loops.Done()
		e.opts.Log.Debug("upgrade failed", "err", err)
		return
	}
	c.gc = gc
	gc.Session().Store(wsConnKey, c)
	if !s.add(c) {
		c.releaseSlot()
		s.loops.Done()
		return // closed with 1001: the server is shutting down
	}
	e.live.Add(1)
	go func() {
		defer s.loops.Done()
		gc.ReadLoop()
	}()
}

func (s *Sockets) add(c *Conn) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close(1001, "server shutting down")
		return false
	}
	if s.conns == nil {
		s.conns = map[*Conn]struct{}{}
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	return true
}

func (s *Sockets) remove(c *Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// Len is the number of live sockets.
func (s *Sockets) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func (s *Sockets) snapshot() []*Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Conn, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	return out
}

// CloseAll sends every live socket a close frame with code and reason and
// drops it; new sockets are still accepted (a hot reload). It returns how
// many were closed.
func (s *Sockets) CloseAll(code uint16, reason string) int {
	conns := s.snapshot()
	for _, c := range conns {
		c.Close(code, reason)
	}
	return len(conns)
}

// Shutdown refuses new sockets (each is closed with 1001 as it arrives)
// and closes every live one with code and reason.
func (s *Sockets) Shutdown(code uint16, reason string) {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.CloseAll(code, reason)
}

// Wait blocks until every socket's read loop, and so its Closed, has
// returned.
func (s *Sockets) Wait() { s.loops.Wait() }

// Conn is one WebSocket with the write discipline every adapter needs:
// writes are serialised and each is bounded by the endpoint's write
// timeout, with the deadline cleared afterwards (a deadline left on the
// socket would fail every later write, the next heartbeat ping included).
// Where the connection bounds its writes itself (rawio.WriteBounder, Linux), the
// timeout counts from the moment a frame has to wait for the peer to make
// room, and a frame that finds room at once sets no deadline at all.
type Conn struct {
	ep     *Endpoint
	gc     *gws.Conn
	header http.Header // the upgrade request's
	sess   Session
	hb     *Heartbeat
	wmu    sync.Mutex
	wb     rawio.WriteBounder // the connection bounds each write's wait itself; nil: set deadlines
	held   rawio.WriteHolder  // holds Replies until the reader has nothing to read; nil: they go at once
	closed atomic.Bool
	seen   chan struct{} // signalled on every received frame (Reachable)

	// Pre-authentication state (PreAuth).
	pre      *guardReader
	authed   atomic.Bool
	slot     atomic.Bool // holds one of the endpoint's unauthenticated slots
	closing  atomic.Bool // Close or Drop was called
	deadline atomic.Pointer[time.Timer]
	// The authentication deadline does not cut into a message the session
	// is handling: it waits for the message's end (handling), and once it
	// has passed (expired) no further message is delivered. amu is held
	// only for these flags, never across a callback.
	amu      sync.Mutex
	handling bool
	expired  bool

	// lastMsg is the endpoint's message count at this socket's latest
	// message (or its authentication): lower is silent longer.
	lastMsg atomic.Uint64
}

const wsConnKey = "hub.ws"

// Guard is the guard of the server run this socket belongs to (nil outside
// a supervisor): timers and goroutines a handler starts for the socket go
// through it.
func (c *Conn) Guard() *hub.Guard { return c.ep.s.guard.Load() }

// Raw is the underlying gws connection.
func (c *Conn) Raw() *gws.Conn { return c.gc }

// Header is the upgrade request's header (its Origin, for one).
func (c *Conn) Header() http.Header { return c.header }

// RemoteAddr is the peer's address.
func (c *Conn) RemoteAddr() string { return c.gc.RemoteAddr().String() }

// Closed reports whether the socket has closed.
func (c *Conn) Closed() bool { return c.closed.Load() }

// Authenticated lifts the pre-authentication guard (PreAuth): the session
// accepted the peer's hello or credential. From here on messages may be up
// to MaxPayload, the deadline is off and the socket no longer counts
// against the endpoint's cap of unauthenticated sockets but against its
// MaxSockets: when the endpoint already holds that many authenticated
// sockets, the one silent the longest (whose latest message is the
// oldest) is closed with 1013 to make room. Call it on the read goroutine
// (in Open or Message), before the message that authenticated returns.
func (c *Conn) Authenticated() {
	if !c.authed.CompareAndSwap(false, true) {
		return
	}
	c.pre.authenticated()
	if t := c.deadline.Load(); t != nil {
		t.Stop()
	}
	c.releaseSlot()
	c.ep.enroll(c)
}

// IsAuthenticated reports whether Authenticated was called.
func (c *Conn) IsAuthenticated() bool { return c.authed.Load() }

func (c *Conn) releaseSlot() {
	if c.slot.CompareAndSwap(true, false) {
		c.ep.pending.Add(-1)
	}
}

// authDeadline runs when the authentication deadline passes.
func (c *Conn) authDeadline() {
	c.amu.Lock()
	c.expired = true
	busy := c.handling
	c.amu.Unlock()
	if !busy {
		c.expire()
	}
}

// beginMessage reports whether a message before authentication may be
// delivered, and marks it under way.
func (c *Conn) beginMessage() bool {
	c.amu.Lock()
	defer c.amu.Unlock()
	if c.expired {
		return false
	}
	c.handling = true
	return true
}

// endMessage closes the socket if the deadline passed while the message
// was handled and it did not authenticate.
func (c *Conn) endMessage() {
	c.amu.Lock()
	c.handling = false
	expired := c.expired
	c.amu.Unlock()
	if expired {
		c.expire()
	}
}

// expire closes a socket that did not authenticate in time.
func (c *Conn) expire() {
	if c.authed.Load() || c.closing.Load() {
		return // authenticated, or the session already closed it and said why
	}
	e := c.ep
	if f := e.opts.PreAuth.OnTimeout; f != nil {
		f(c)
	} else {
		e.thin.Log(e.opts.Log, slog.LevelInfo, "timeout", "closing a socket that did not authenticate in time",
			"timeout", e.opts.PreAuth.Timeout)
	}
	c.Close(1008, "authentication timeout")
}

// WriteFrame writes one frame of any opcode within timeout (0: the
// endpoint's write timeout).
func (c *Conn) WriteFrame(op gws.Opcode, b []byte, timeout time.Duration) error {
	return c.writeFrame(op, b, timeout, false)
}

// Reply sends b as one text frame that answers the message being handled:
// call it on the read goroutine, in Message. Where the socket can hold
// writes (rawio.WriteHolder, Linux) the reply waits until the reader finds
// nothing more to read, so the replies to frames a peer sent back to back
// leave in one write, and a peer that waits for each reply gets it at
// once; writes that are not replies send what is held first, so the order
// is kept. Elsewhere it is WriteText.
func (c *Conn) Reply(b []byte) error { return c.writeFrame(gws.OpcodeText, b, 0, c.held != nil) }

func (c *Conn) writeFrame(op gws.Opcode, b []byte, timeout time.Duration, hold bool) error {
	if c.closed.Load() {
		return gws.ErrConnClosed
	}
	if timeout <= 0 {
		timeout = c.ep.opts.WriteTimeout
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if hold {
		c.held.HoldWrites(true)
		defer c.held.HoldWrites(false)
	}
	if c.wb != nil {
		c.wb.BoundWrites(timeout)
		err := c.gc.WriteMessage(op, b)
		c.wb.BoundWrites(c.ep.opts.WriteTimeout)
		return err
	}
	c.gc.SetWriteDeadline(time.Now().Add(timeout))
	err := c.gc.WriteMessage(op, b)
	c.gc.SetWriteDeadline(time.Time{})
	return err
}

// WriteText sends one text frame.
func (c *Conn) WriteText(b []byte) error { return c.WriteFrame(gws.OpcodeText, b, 0) }

// WriteJSON sends v as one text frame.
func (c *Conn) WriteJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.WriteText(b)
}

// WritePing makes Conn the heartbeat's Pinger: pings share the write
// discipline.
func (c *Conn) WritePing(payload []byte) error {
	return c.WriteFrame(gws.OpcodePing, payload, 0)
}

// Close sends a close frame (bounded by one second, so a stuck peer cannot
// hold anyone) and drops the socket; the session's Closed follows on the
// read goroutine.
func (c *Conn) Close(code uint16, reason string) {
	c.closing.Store(true)
	c.pre.close()
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.gc.SetWriteDeadline(time.Now().Add(time.Second))
	if err := c.gc.WriteClose(code, []byte(reason)); err != nil {
		c.gc.NetConn().Close()
	}
}

// Drop closes the socket without a close frame (a dead peer).
func (c *Conn) Drop() {
	c.closing.Store(true)
	c.pre.close()
	c.gc.NetConn().Close()
}

// Reachable probes the peer: a socket the OS has not buried yet is not a
// live peer, so it must answer a ping (any frame counts) within timeout.
func (c *Conn) Reachable(timeout time.Duration) bool {
	if c.closed.Load() {
		return false
	}
	select {
	case <-c.seen:
	default:
	}
	if err := c.WriteFrame(gws.OpcodePing, nil, timeout); err != nil {
		return false
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-c.seen:
		return !c.closed.Load()
	case <-t.C:
		return false
	}
}

// markSeen records a received frame for the heartbeat and Reachable.
func (c *Conn) markSeen() {
	if c.hb != nil {
		c.hb.Seen()
	}
	select {
	case c.seen <- struct{}{}:
	default:
	}
}

// wsEvents adapts gws's callbacks to Handler and Session, adding the
// heartbeat and connection tracking every adapter needs.
type wsEvents struct{ e *Endpoint }

func connOf(gc *gws.Conn) *Conn {
	v, _ := gc.Session().Load(wsConnKey)
	c, _ := v.(*Conn)
	return c
}

// recover, deferred directly by each callback that runs handler code,
// turns a handler's panic into a dropped socket and a report to the
// guard (which restarts the adapter). gws recovers OnMessage and OnClose
// itself but only logs, and does not recover OnOpen at all: a panic there
// killed the whole process.
func (ev *wsEvents) recover(c *Conn, where string) {
	r := recover()
	if r == nil {
		return
	}
	pe := &hub.PanicError{Where: "websocket " + where, Value: r, Stack: debug.Stack()}
	// Report before dropping, so whoever sees the socket close can count
	// on the panic having been handled.
	if g := ev.e.s.guard.Load(); g != nil {
		g.Handle(pe)
	} else {
		ev.e.opts.Log.Error("websocket handler panicked; socket dropped", "in", pe.Where, "panic", fmt.Sprint(r), "stack", string(pe.Stack))
	}
	if where != "close" {
		c.Drop()
	}
}

func (ev *wsEvents) OnOpen(gc *gws.Conn) {
	c := connOf(gc)
	defer ev.recover(c, "open")
	c.deadline.Store(c.Guard().AfterFunc("websocket auth deadline", ev.e.opts.PreAuth.Timeout, c.authDeadline))
	c.hb = StartHeartbeat(ev.e.opts.Heartbeat, c, func() {
		ev.e.opts.Log.Warn("peer silent past the heartbeat deadline; treating it as gone", "remote", c.RemoteAddr())
		c.Drop()
	})
	if c.sess = ev.e.h.Open(c); c.sess == nil {
		c.Drop()
	}
}

func (ev *wsEvents) OnClose(gc *gws.Conn, err error) {
	c := connOf(gc)
	defer ev.recover(c, "close")
	c.closed.Store(true)
	if t := c.deadline.Load(); t != nil {
		t.Stop()
	}
	c.releaseSlot()
	ev.e.unenroll(c)
	c.pre.release()
	c.pre.close()
	c.hb.Stop()
	ev.e.s.remove(c)
	ev.e.live.Add(-1)
	if c.sess != nil {
		c.sess.Closed(err)
	}
}

func (ev *wsEvents) OnPing(gc *gws.Conn, payload []byte) {
	c := connOf(gc)
	c.markSeen()
	c.WriteFrame(gws.OpcodePong, payload, 0)
}

func (ev *wsEvents) OnPong(gc *gws.Conn, _ []byte) { connOf(gc).markSeen() }

func (ev *wsEvents) OnMessage(gc *gws.Conn, m *gws.Message) {
	c := connOf(gc)
	defer c.pre.release() // after the buffer is back: the message is done
	defer m.Close()
	defer ev.recover(c, "message")
	c.markSeen()
	c.lastMsg.Store(ev.e.msgs.Add(1))
	if !c.authed.Load() {
		if !c.beginMessage() {
			return // closing: the deadline passed
		}
		defer c.endMessage()
	}
	if c.sess != nil {
		c.sess.Message(m)
	}
}

// gwsLogger routes gws's own error lines (a recovered handler panic) to the
// adapter's log instead of the standard logger.
type gwsLogger struct{ log *slog.Logger }

func (l gwsLogger) Error(v ...any) { l.log.Error("websocket: " + fmt.Sprint(v...)) }
