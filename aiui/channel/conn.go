package channel

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/hub"
)

// Limits of one connection's bookkeeping.
const (
	MaxThreadIDBytes = 256
	MaxOpenThreads   = 1024
	// maxClosedRemembered bounds the closed-thread set; the oldest ids are
	// forgotten first (a client reusing one that old gets a fresh thread).
	maxClosedRemembered = 8192
	// DefaultMaxHeldBytes bounds what one connection's open threads hold
	// in memory together (accumulated text, event logs): per-thread limits
	// alone would let MaxOpenThreads threads hold gigabytes.
	DefaultMaxHeldBytes = 64 << 20
	// DefaultMaxHeldTotal is the Pool a backend gives its connections.
	DefaultMaxHeldTotal = 256 << 20
)

// Host is what a connection needs from the server.
type Host interface {
	// NewThread fills the server-provided parts of a thread's context
	// (SendPrompt, Push, Trace, TraceID, limits, Log).
	NewThread(ctx *ThreadContext)
}

// Conn is one /ws connection's protocol state machine. It is not safe for
// concurrent use: the socket's read loop feeds it one frame at a time,
// which is what gives strict per-connection ordering.
type Conn struct {
	reg     Registry
	host    Host
	log     *slog.Logger
	format  string
	fmt     Format
	hello   *frame.HelloMeta
	said    bool
	threads map[string]*thread
	closed  map[string]struct{}
	order   []string
	// MaxHeldBytes bounds the bytes the open threads hold together
	// (0: DefaultMaxHeldBytes).
	MaxHeldBytes int64
	held         int64
	// Pool, when set, also bounds what this connection's threads hold,
	// together with every other connection sharing it (a backend's: the
	// spec has no credential, so any local process that says hello may
	// open connections up to the listener's cap, 256 × MaxHeldBytes).
	Pool *hub.Budget
}

type thread struct {
	proc   Processor
	ctx    *ThreadContext
	closed bool
	held   int64
}

// NewConn starts a connection that has not said hello yet.
func NewConn(reg Registry, host Host, log *slog.Logger) *Conn {
	return &Conn{reg: reg, host: host, log: log, threads: map[string]*thread{}, closed: map[string]struct{}{}}
}

// Format is the connection's format ("" before hello).
func (c *Conn) Format() string { return c.format }

// Hello is the hello meta (nil before hello or when none was sent).
func (c *Conn) Hello() *frame.HelloMeta { return c.hello }

// HelloDone reports whether the hello was accepted.
func (c *Conn) HelloDone() bool { return c.said }

func fatal(format string, a ...any) frame.Response {
	return frame.Response{OK: false, Fatal: true, Error: fmt.Sprintf(format, a...)}
}

// Handle processes one WebSocket message and returns its ack. When the ack
// is fatal the caller sends it and closes the socket.
func (c *Conn) Handle(binary bool, data []byte) frame.Response {
	if !binary {
		return fatal("non-binary frame received: /ws frames are binary (u32 header length + JSON header + payload)")
	}
	env, payload, err := frame.Decode(data)
	if !c.said {
		switch {
		case err != nil:
			return fatal("malformed first frame: %v", err)
		case env.Kind != frame.KindHello:
			return fatal("first frame must be a hello, got kind %q", env.Kind)
		case env.V != frame.Version:
			return fatal("unsupported protocol version %d (this server speaks %d)", env.V, frame.Version)
		case len(payload) != 0:
			return fatal("hello must carry an empty payload")
		}
		f, ok := c.reg[env.Format]
		if !ok {
			return fatal("unknown format %q (known formats: %s)", env.Format, c.reg.known())
		}
		c.said, c.format, c.fmt, c.hello = true, env.Format, f, env.Meta
		return frame.Response{OK: true}
	}
	if err != nil {
		return frame.Response{Error: "malformed frame: " + err.Error()}
	}
	if env.V != frame.Version {
		return frame.Response{ThreadID: env.ThreadID, Error: fmt.Sprintf("unsupported protocol version %d", env.V)}
	}
	if env.Kind != frame.KindData {
		return frame.Response{ThreadID: env.ThreadID, Error: fmt.Sprintf("expected a data frame after hello, got kind %q", env.Kind)}
	}
	id := env.ThreadID
	if id == "" || len(id) > MaxThreadIDBytes {
		return frame.Response{Error: "data frame missing a usable threadId"}
	}
	if _, done := c.closed[id]; done {
		return frame.Response{ThreadID: id, Error: fmt.Sprintf("thread %q is closed", id)}
	}
	t := c.threads[id]
	if t == nil {
		if len(c.threads) >= MaxOpenThreads {
			return frame.Response{ThreadID: id, Error: fmt.Sprintf("too many open threads on this connection (max %d)", MaxOpenThreads)}
		}
		t = c.open(id)
		if t.proc == nil {
			return frame.Response{ThreadID: id, Error: "processor failed to start"}
		}
	}
	resp := frame.Response{OK: true, ThreadID: id}
	v, err := c.fmt.Codec.Decode(payload)
	if err != nil {
		resp.OK, resp.Error = false, "payload failed to decode: "+err.Error()
		if t.ctx.Trace != nil {
			t.ctx.Trace(StageRejected, resp.Error)
		}
		return resp
	}
	if err := safeCall(func() error { return t.proc.OnMessage(v, MessageMeta{Fin: env.Fin, Chunk: env.Chunk}) }); err != nil {
		resp.OK, resp.Error = false, err.Error()
	}
	if !resp.OK && t.ctx.Trace != nil {
		t.ctx.Trace(StageRejected, resp.Error)
	}
	if t.closed {
		if t.ctx.Trace != nil {
			t.ctx.Trace(StageClosed, nil)
		}
		resp.Closed = true
		c.let(t.held)
		delete(c.threads, id)
		c.remember(id)
	}
	return resp
}

func (c *Conn) open(id string) *thread {
	t := &thread{}
	ctx := &ThreadContext{ThreadID: id, Hello: c.hello, Format: c.format, Close: func() { t.closed = true }}
	ctx.Hold = func(n int64) error {
		limit := c.MaxHeldBytes
		if limit <= 0 {
			limit = DefaultMaxHeldBytes
		}
		if c.held+n > limit {
			return fmt.Errorf("this connection's open threads would hold more than %d bytes", limit)
		}
		if c.Pool != nil && !c.Pool.TryAcquire(n) {
			return fmt.Errorf("the server's open threads would hold more than %d bytes; finish or close some", c.Pool.Size())
		}
		c.held += n
		t.held += n
		return nil
	}
	c.host.NewThread(ctx)
	if ctx.Log == nil {
		ctx.Log = c.log
	}
	t.ctx = ctx
	_ = safeCall(func() error { t.proc = c.fmt.New(ctx); return nil })
	if t.proc != nil {
		c.threads[id] = t
	}
	return t
}

func (c *Conn) remember(id string) {
	c.closed[id] = struct{}{}
	c.order = append(c.order, id)
	if len(c.order) > maxClosedRemembered {
		delete(c.closed, c.order[0])
		c.order = c.order[1:]
	}
}

// Abandon runs when the socket closes: every thread still open is dropped
// without sending anything, and its processor tears down.
func (c *Conn) Abandon() {
	for id, t := range c.threads {
		if a, ok := t.proc.(Abandoner); ok {
			_ = safeCall(func() error { a.OnAbandon(); return nil })
		}
		if t.ctx.Trace != nil {
			t.ctx.Trace(StageAbandoned, "the connection closed before fin")
		}
		delete(c.threads, id)
	}
	c.let(c.held)
}

// let gives back n held bytes (a thread closed, or the connection).
func (c *Conn) let(n int64) {
	c.held -= n
	if c.Pool != nil {
		c.Pool.Release(n)
	}
}

// OpenThreads is the number of threads not yet closed.
func (c *Conn) OpenThreads() int { return len(c.threads) }

// safeCall turns a processor panic into a frame error, so one bad frame
// never takes down the connection or the adapter.
func safeCall(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("processor failed: panic: %v", r)
			slog.Default().Debug("processor panic", "stack", string(debug.Stack()))
		}
	}()
	if err = f(); err != nil && !errors.Is(err, errProcessor) {
		err = fmt.Errorf("processor failed: %w", err)
	}
	return err
}

var errProcessor = errors.New("processor failed")
