package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP protocol constants this layer acts on.
const (
	methodInitialize       = "initialize"
	methodCancelled        = "notifications/cancelled"
	methodToolsListChanged = "notifications/tools/list_changed"
	// statelessVersion is the first protocol version without initialize
	// (SEP-2575): such a client names its version in every request's _meta.
	statelessVersion = "2026-07-28"
)

// session wraps one client's connection. It sees every message in both
// directions, which is where the rules the SDK does not keep live: who the
// client is and when it may be notified, cancelled calls going unanswered,
// and answers that carry a JSON-RPC code.
type session struct {
	srv  *Server
	conn mcp.Connection // set by Connect, before any Read
	seen bool           // conn calls see itself (a LineTransport's)
	base context.Context

	mu       sync.Mutex
	inflight map[jsonrpc.ID]*inflightCall
	listens  map[jsonrpc.ID]bool // open list_changed streams (listen.go)
	initID   jsonrpc.ID          // the initialize call, once seen
	initVer  string              // the protocol version it asks for ("" unknown)
	readDone bool                // reading has ended: no more fast calls
	emptied  chan struct{}       // closed when inflight empties, while drain waits
	done     chan struct{}       // closed when reading has ended
	jobs     chan fastJob        // fast calls for an idle worker
	workers  sync.WaitGroup
	idle     atomic.Int32 // workers waiting on jobs

	announced atomic.Bool // initialize or a stateless request seen
	stateless atomic.Bool // announced by a stateless request (SEP-2575)

	// readyMu orders the initialize answer before any notification: the
	// answer is written and ready set under it, and notify checks ready
	// under it.
	readyMu sync.Mutex
	ready   bool        // notifications may flow
	readyAt uint64      // the Server's change count when ready was set
	fastOK  atomic.Bool // the fast path may answer calls (see fastReady)

	closed    chan struct{} // closed by Close
	closeOnce sync.Once
}

// drainGrace bounds how long a session whose client closed its input
// goes on answering the calls it had already read. The client may still
// be reading (`printf '…' | hub mcp` closes stdin at once, and reads every
// answer); one that closed its input to end the session (MCP's stdio
// shutdown) waits for the process to exit, so this is also the longest a
// closed stdin keeps it.
const drainGrace = 5 * time.Second

type inflightCall struct {
	method    string
	cancelled bool
	cancel    context.CancelFunc // a fast call's (fastcall.go); nil for the SDK's
}

// sessionTransport hands the SDK the session instead of the bare connection.
type sessionTransport struct {
	inner mcp.Transport
	s     *session
}

func (t *sessionTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	if lt, ok := t.inner.(*LineTransport); ok {
		// The reading goroutine sees each message first: a fast call
		// starts there, without a hand-over to the SDK's reader.
		c := lt.conn()
		t.s.conn, t.s.seen = c, true
		c.start(t.s.see)
		return t.s, nil
	}
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.s.conn = c
	return t.s, nil
}

var _ mcp.Connection = (*session)(nil)

// Read passes the next message on after noting what it means for the
// session.
func (s *session) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := s.conn.Read(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				s.drain(s.srv.drainGrace())
			}
			s.stopFast()
			return nil, err
		}
		if s.seen || s.see(msg) {
			return msg, nil
		}
	}
}

// see notes what msg means for the session, and reports whether it goes
// on to the SDK (false: the fast path took it).
func (s *session) see(msg jsonrpc.Message) bool {
	if f := s.srv.opts.OnMessage; f != nil {
		f()
	}
	if req, ok := msg.(*jsonrpc.Request); ok {
		if s.tryFast(req) {
			return false
		}
		return s.received(req)
	}
	return true
}

// received notes a request for the SDK, and reports whether it goes on
// to the SDK.
func (s *session) received(req *jsonrpc.Request) bool {
	if !req.IsCall() {
		if req.Method == methodCancelled {
			s.cancelled(req.Params)
		}
		return true
	}
	announce, ready := false, false
	s.mu.Lock()
	if c, dup := s.inflight[req.ID]; !dup {
		s.inflight[req.ID] = &inflightCall{method: req.Method}
	} else if c.cancel != nil {
		// The id of a fast call still running, which the SDK does not
		// know: it would answer this one, and its answer would settle the
		// fast call's id, which could then not be cancelled. The SDK drops
		// a repeated id of its own unanswered; so is this one.
		s.mu.Unlock()
		return false
	}
	switch {
	case req.Method == methodInitialize:
		// Ready once its answer is out (see Write), so no notification can
		// overtake the initialize result.
		s.initID, s.initVer = req.ID, askedVersion(req.Params)
		announce = true
	case !s.announced.Load() && s.srv.servesStateless(req.Params):
		// A stateless client never initializes: its first request is both
		// its announcement and its consent to notifications (but see
		// notify: list_changed reaches it only through the SDK).
		announce, ready = true, true
		s.stateless.Store(true)
	}
	s.mu.Unlock()
	// Hooks run before the SDK handles the request: ownership (Stitch Slop
	// §2.7/§2.8) must hold by the time the client reads the answer.
	if announce && !s.announced.Swap(true) {
		if f := s.srv.opts.OnInit; f != nil {
			f()
		}
	}
	if ready {
		s.markReady()
	}
	return true
}

// cancelled records notifications/cancelled for a call still in flight:
// MCP (basic/utilities/cancellation) says the receiver does not answer a
// cancelled request, and the SDK answers it anyway.
func (s *session) cancelled(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil || !id.IsValid() {
		return
	}
	s.mu.Lock()
	if c := s.inflight[id]; c != nil {
		c.cancelled = true
		if c.cancel != nil {
			c.cancel() // the SDK cancels its own handlers
		}
	}
	s.mu.Unlock()
}

// isReady reports whether the client has initialized (or, stateless,
// announced itself).
func (s *session) isReady() bool {
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	return s.ready
}

func (s *session) markReady() {
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	s.setReadyLocked(s.srv.changeCount())
}

// setReadyLocked runs OnReady under readyMu, so that a notification sent
// after the session is ready also finds the hook done. at is the Server's
// change count before the client could list the tools.
func (s *session) setReadyLocked(at uint64) {
	if s.ready {
		return
	}
	s.ready = true
	s.readyAt = at
	if f := s.srv.opts.OnReady; f != nil {
		f()
	}
}

// Write passes an answer on unless its call was cancelled, and gives an
// error answer the JSON-RPC code the SDK left out.
func (s *session) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if req, isReq := msg.(*jsonrpc.Request); isReq && req.Method == methodSubscriptionsAcked {
		// Under readyMu, as the initialize answer: a notification comes
		// before the acknowledgement is out, or after the stream is noted.
		s.readyMu.Lock()
		defer s.readyMu.Unlock()
		if err := s.conn.Write(ctx, msg); err != nil {
			return err
		}
		s.noteListen(req.Params)
		return nil
	}
	if !ok || !resp.ID.IsValid() {
		return s.conn.Write(ctx, msg)
	}
	s.mu.Lock()
	c := s.settleLocked(resp.ID)
	isInit := s.initID.IsValid() && resp.ID == s.initID
	initVer := s.initVer
	s.mu.Unlock()
	if c != nil && c.cancelled {
		return nil
	}
	if resp.Error != nil {
		msg = s.coded(resp, c)
	}
	if !isInit || resp.Error != nil {
		return s.conn.Write(ctx, msg)
	}
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	// Counted before the answer goes out: the client's tools/list, sent
	// after it reads the answer, sees every change counted so far.
	at := s.srv.changeCount()
	if err := s.conn.Write(ctx, msg); err != nil {
		return err
	}
	s.setReadyLocked(at)
	// The SDK adds "resultType" to every result for a client that asked
	// for a multi-round-trip protocol; the fast path does not.
	if initVer != "" && initVer < statelessVersion {
		s.fastOK.Store(true)
	}
	return nil
}

// coded returns resp with a JSON-RPC error code and a bounded message.
// The SDK answers a few failures with code 0 (initialize params that do
// not decode, a call before initialize); JSON-RPC 2.0 §5.1 has codes for
// both. Its message for params that do not decode quotes them whole (a
// 10 MiB argument came back in a 10 MiB message); §5.1 asks for "a
// concise single sentence".
func (s *session) coded(resp *jsonrpc.Response, c *inflightCall) jsonrpc.Message {
	var we *jsonrpc.Error
	if errors.As(resp.Error, &we) && we.Code != 0 {
		// The wire message is the whole chain's (the SDK wraps a coded
		// error in its context), not we.Message alone.
		if msg := resp.Error.Error(); len(msg) > maxErrorMessage {
			return &jsonrpc.Response{ID: resp.ID, Error: &jsonrpc.Error{Code: we.Code, Message: shorten(msg), Data: we.Data}}
		}
		return resp
	}
	code := int64(jsonrpc.CodeInternalError)
	switch {
	case c != nil && c.method == methodInitialize:
		code = jsonrpc.CodeInvalidParams
	case !s.isReady():
		// Not initialized (an initialize that failed does not count): the
		// SDK refuses the call as one during initialization.
		code = jsonrpc.CodeInvalidRequest
	}
	return &jsonrpc.Response{ID: resp.ID, Error: &jsonrpc.Error{Code: code, Message: shorten(resp.Error.Error())}}
}

// maxErrorMessage bounds an error answer's message in bytes.
const maxErrorMessage = 1 << 10

// shorten cuts msg to maxErrorMessage bytes, on a rune boundary, marking
// the cut.
func shorten(msg string) string {
	if len(msg) <= maxErrorMessage {
		return msg
	}
	const mark = "…"
	cut := maxErrorMessage - len(mark)
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + mark
}

// notify writes a notification straight to the client once it may take
// one; a session that is not ready yet is skipped, and so is one that was
// ready only from change number after on (after 0: none is).
func (s *session) notify(ctx context.Context, msg *jsonrpc.Request, after uint64) error {
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	if !s.ready || after != 0 && s.readyAt >= after {
		return nil
	}
	if msg.Method == methodToolsListChanged && s.stateless.Load() {
		return s.notifyListens(ctx) // SEP-2575: see listen.go
	}
	return s.conn.Write(ctx, msg)
}

// drain waits, at most grace, until every call read before the input
// ended has been answered: the SDK cancels whatever is still running once
// Read reports the end.
func (s *session) drain(grace time.Duration) {
	s.mu.Lock()
	if s.pendingLocked() == 0 {
		s.mu.Unlock()
		return
	}
	emptied := make(chan struct{})
	s.emptied = emptied
	s.mu.Unlock()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-emptied:
	case <-t.C:
	case <-s.closed:
	}
}

// settleLocked removes the call id from the in-flight set (it is answered,
// or never will be) and returns what it was, nil if unknown.
func (s *session) settleLocked(id jsonrpc.ID) *inflightCall {
	c := s.inflight[id]
	delete(s.inflight, id)
	delete(s.listens, id)
	if s.emptied != nil && s.pendingLocked() == 0 {
		close(s.emptied)
		s.emptied = nil
	}
	return c
}

// pendingLocked counts the calls the drain waits for: every call in
// flight but a subscriptions/listen stream, which ends only when the
// client cancels it, and is cancelled when the session ends.
func (s *session) pendingLocked() int {
	n := 0
	for _, c := range s.inflight {
		if c.method != methodSubscriptionsListen {
			n++
		}
	}
	return n
}

func (s *session) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	return s.conn.Close()
}

func (s *session) SessionID() string { return s.conn.SessionID() }

// servesStateless reports whether params name a stateless protocol version
// this server serves (SEP-2575 puts it in _meta).
func (srv *Server) servesStateless(params json.RawMessage) bool {
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return false
	}
	v, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string)
	if v < statelessVersion {
		return false
	}
	// What the SDK asks of a stateless request besides, or it refuses it
	// (-32602) and the client has announced nothing.
	if _, ok := p.Meta[mcp.MetaKeyClientCapabilities].(map[string]any); !ok {
		return false
	}
	if info, has := p.Meta[mcp.MetaKeyClientInfo]; has {
		if _, ok := info.(map[string]any); !ok {
			return false
		}
	}
	return len(srv.opts.ProtocolVersions) == 0 || slices.Contains(srv.opts.ProtocolVersions, v)
}
