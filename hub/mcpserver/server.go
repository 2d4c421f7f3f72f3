package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure a Server. Hooks run once per session, on its read or
// write path: they must not block, nor call the Server (start a goroutine
// for anything more than recording the event).
type Options struct {
	// Name and Version are the serverInfo.
	Name, Version string
	// Instructions tell the model how to use the server.
	Instructions string
	// Experimental capabilities, e.g. {"claude/channel": {}}.
	Experimental map[string]any
	// ProtocolVersions narrows the versions served; empty means every
	// version the SDK knows, stateless (2026-07-28) included.
	ProtocolVersions []string
	// EchoProtocolVersion answers initialize with the version the client
	// asked for, whatever it is (Stitch Slop §3.2), where the SDK would
	// negotiate one it knows.
	EchoProtocolVersion bool

	// OnInit runs when the client announces itself: at initialize, before
	// the answer goes out, or at a stateless client's first request.
	OnInit func()
	// OnReady runs when notifications may flow: once the initialize answer
	// is out, or at a stateless client's first request.
	OnReady func()
	// OnMessage runs for every message the client sends.
	OnMessage func()
	// UnknownTool answers tools/call for a name no tool is registered
	// under; nil leaves the SDK's -32602 "unknown tool".
	UnknownTool mcp.ToolHandler
	// ListChangedDelay coalesces notifications/tools/list_changed: the
	// first change schedules one notification this long after it, and
	// every change until then rides along. A server of several bridges
	// wants it (their pages change independently, often together); 0
	// sends one per change, at once.
	ListChangedDelay time.Duration

	// Log receives the SDK's warnings and errors; nil discards them.
	Log *slog.Logger
}

// Server is one MCP server: the SDK's, plus the bookkeeping the middleware
// needs (which tools exist, in which order; which sessions are live).
type Server struct {
	sdk  *mcp.Server
	opts Options
	log  *slog.Logger

	mu        sync.Mutex
	slots     map[string]slot // registered tool name → owner and position
	nextPos   int             // position of the next tool the server itself adds
	nextOwner int             // owner id of the next Forwarder
	sessions  map[*session]struct{}
	listDue   bool                // a delayed list_changed is scheduled
	changes   uint64              // tool-list changes announced so far
	fast      map[string]fastTool // forwarded tools, by registered name

	sdkOnly   bool          // no fast path (fastcall.go): tests compare the two
	drainFor  time.Duration // tests: drainGrace when not 0
	fastCalls atomic.Int64  // calls the fast path took, for those tests
}

// slot orders tools/list: the server's own tools in the order added, then
// each forwarder's in the order of its latest sync.
type slot struct{ owner, pos int }

// New builds a server with the tools capability and list_changed
// advertised explicitly, whether or not any tool exists yet.
func New(o Options) *Server {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: o, log: log, slots: map[string]slot{}, nextOwner: 1, sessions: map[*session]struct{}{}, fast: map[string]fastTool{}}
	s.sdk = mcp.NewServer(&mcp.Implementation{Name: o.Name, Version: o.Version}, &mcp.ServerOptions{
		Instructions: o.Instructions,
		Capabilities: &mcp.ServerCapabilities{
			Experimental: o.Experimental,
			Tools:        &mcp.ToolCapabilities{ListChanged: true},
		},
		SupportedProtocolVersions: o.ProtocolVersions,
		Logger:                    slog.New(minLevel{log.Handler(), slog.LevelWarn}),
	})
	s.sdk.AddReceivingMiddleware(s.receive)
	s.sdk.AddSendingMiddleware(dropSDKListChanged)
	return s
}

// SDK is the underlying server, for what this package does not wrap.
// Tools must still be added through this package, or tools/list order
// and UnknownTool will not know them.
func (s *Server) SDK() *mcp.Server { return s.sdk }

// AddTool adds (or replaces) one of the server's own tools. Its schema is
// checked first: the SDK panics on one that is not an object schema. It
// sends no list_changed: tools added before any session need none, and a
// caller changing tools at run time sends one NotifyToolsChanged after
// all its changes (as a Forwarder does).
func (s *Server) AddTool(t *mcp.Tool, h mcp.ToolHandler) error {
	s.mu.Lock()
	pos, ok := s.slots[t.Name]
	if !ok {
		pos = slot{0, s.nextPos}
		s.nextPos++
	} else if pos.owner != 0 {
		s.mu.Unlock()
		return fmt.Errorf("tool %q is registered by a forwarder", t.Name)
	}
	s.slots[t.Name] = pos
	s.mu.Unlock()
	if err := s.register(t, h); err != nil {
		if !ok {
			s.release(t.Name, 0)
		}
		return err
	}
	return nil
}

// AddTool adds a typed tool (the SDK infers its schema from In) as one of
// s's own, static tools; like the SDK's, it panics on a bad definition.
func AddTool[In, Out any](s *Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	s.mu.Lock()
	if _, ok := s.slots[t.Name]; !ok {
		s.slots[t.Name] = slot{0, s.nextPos}
		s.nextPos++
	}
	s.mu.Unlock()
	mcp.AddTool(s.sdk, t, h)
}

// register adds t to the SDK server, turning its panics (a schema it
// cannot use, a bad x-mcp-header) into an error: a page's tool list must
// never take the process down.
func (s *Server) register(t *mcp.Tool, h mcp.ToolHandler) (err error) {
	if raw, ok := t.InputSchema.(json.RawMessage); ok {
		schema, err := CheckSchema(raw)
		if err != nil {
			return err
		}
		c := *t
		c.InputSchema = schema
		t = &c
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the SDK refused tool %q: %v", t.Name, r)
		}
	}()
	s.sdk.AddTool(t, h)
	return nil
}

// claim reserves name for owner at pos; false when another owner holds it.
func (s *Server) claim(name string, owner, pos int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.slots[name]; ok && cur.owner != owner {
		return false
	}
	s.slots[name] = slot{owner, pos}
	return true
}

// release forgets name if owner holds it.
func (s *Server) release(name string, owner int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.slots[name]; ok && cur.owner == owner {
		delete(s.slots, name)
	}
}

func (s *Server) has(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.slots[name]
	return ok
}

// sortTools puts tools/list in registration order; the SDK sorts by name,
// which would bury a bridge's own tools among a page's.
func (s *Server) sortTools(tools []*mcp.Tool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := func(t *mcp.Tool) slot {
		if sl, ok := s.slots[t.Name]; ok {
			return sl
		}
		return slot{owner: s.nextOwner} // unknown to us: last
	}
	slices.SortStableFunc(tools, func(a, b *mcp.Tool) int {
		ka, kb := key(a), key(b)
		return cmp.Or(cmp.Compare(ka.owner, kb.owner), cmp.Compare(ka.pos, kb.pos))
	})
}

// Serve runs one session over t until the client goes away (nil: it closed
// our input, or its end of our output) or ctx ends (ctx.Err()). announced
// reports whether the client sent initialize or a stateless request: a
// client gone ends an owned process (Stitch Slop §2.8) and only then.
func (s *Server) Serve(ctx context.Context, t mcp.Transport) (announced bool, err error) {
	// A fast call's context keeps ctx's values but, like the SDK's handler
	// contexts, ends with its cancellation or the end of reading.
	sess := &session{srv: s, base: context.WithoutCancel(ctx), inflight: map[jsonrpc.ID]*inflightCall{}, listens: map[jsonrpc.ID]bool{},
		done: make(chan struct{}), jobs: make(chan fastJob), closed: make(chan struct{})}
	s.mu.Lock()
	s.sessions[sess] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.sessions, sess)
		s.mu.Unlock()
	}()
	ss, err := s.sdk.Connect(ctx, &sessionTransport{inner: t, s: sess}, nil)
	if err != nil {
		return false, err
	}
	// Closing the connection ends its reader, which cancels every handler
	// still running; the SDK's own Close would wait for them instead.
	stop := context.AfterFunc(ctx, func() { sess.Close() })
	err = ss.Wait()
	stop()
	ss.Close()
	sess.stopFast()
	sess.workers.Wait()
	if ctx.Err() != nil {
		return sess.announced.Load(), ctx.Err()
	}
	if oe := (*outputError)(nil); errors.As(err, &oe) {
		err = nil // the client went away, its way
	}
	return sess.announced.Load(), err
}

func (s *Server) drainGrace() time.Duration { return cmp.Or(s.drainFor, drainGrace) }

// Notify sends a notification to every session that may take one.
func (s *Server) Notify(ctx context.Context, method string, params any) error {
	msg := &jsonrpc.Request{Method: method}
	if params != nil {
		raw, err := json.Marshal(params)
		if err != nil {
			return err
		}
		msg.Params = raw
	}
	return s.send(ctx, msg, 0)
}

// send writes msg to every session that may take it, and was ready
// before change number after (0: any).
func (s *Server) send(ctx context.Context, msg *jsonrpc.Request, after uint64) error {
	s.mu.Lock()
	sessions := make([]*session, 0, len(s.sessions))
	for sess := range s.sessions {
		sessions = append(sessions, sess)
	}
	s.mu.Unlock()
	var errs []error
	for _, sess := range sessions {
		if err := sess.notify(ctx, msg, after); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// changeCount is how many tool-list changes have been announced.
func (s *Server) changeCount() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changes
}

// NotifyToolsChanged sends the bare notification Stitch Slop §3.3 shows,
// {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}, at once
// or, with ListChangedDelay, once for every change within the delay.
func (s *Server) NotifyToolsChanged(ctx context.Context) error {
	d := s.opts.ListChangedDelay
	s.mu.Lock()
	s.changes++
	if d <= 0 {
		s.mu.Unlock()
		return s.Notify(ctx, methodToolsListChanged, nil)
	}
	defer s.mu.Unlock()
	if !s.listDue {
		s.listDue = true
		// Not ctx: the caller's context may end before the delay does.
		time.AfterFunc(d, func() {
			s.mu.Lock()
			s.listDue = false
			last := s.changes
			s.mu.Unlock()
			// A session that became ready after the burst's last change
			// listed the tools as they are now: nothing changed for it.
			msg := &jsonrpc.Request{Method: methodToolsListChanged}
			if err := s.send(context.Background(), msg, last); err != nil {
				s.log.Debug("list_changed not delivered", "err", err)
			}
		})
	}
	return nil
}
