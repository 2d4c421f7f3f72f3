package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fast path: a tools/call of a forwarded page tool is answered here,
// not by the SDK. Issue 14 asks that a call through `hub mcp` cost at most
// 1.5× the bridge's own control-plane call, and the SDK alone costs about
// as much as that whole call: per request it decodes the params twice
// (for _meta, then for the params) with a decoder that allocates 32 KiB
// each time, runs the handler on a fresh goroutine behind a queue
// goroutine, and marshals the result three times over. A page tool needs
// none of it: its arguments go to the page as raw bytes and its result is
// text and images.
//
// The fast path takes only what it answers exactly as the SDK path would
// (fastcall_test.go compares the bytes of both): a call once the
// initialize answer is out, from a client of a protocol without
// multi-round-trip results, whose params are a tool name the Server has
// forwarded, an arguments object (or none) and a _meta without a protocol
// version. Everything else, odd or rare, goes to the SDK as before.
// Cancellation (notifications/cancelled: no answer), a panicking tool
// (-32603), error codes, agent activity (OnMessage) and the end of the
// session behave as they do there.

// fastTool is a forwarded tool the fast path may call.
type fastTool struct {
	call     CallFunc
	original string
}

func (s *Server) setFast(name string, t fastTool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fast[name] = t
}

func (s *Server) dropFast(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.fast, name)
}

func (s *Server) fastTool(name string) (fastTool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.fast[name]
	return t, ok
}

// callParams are tools/call params the fast path takes.
type callParams struct {
	name string
	args json.RawMessage // nil when absent
}

// parseCallParams accepts params of exactly the keys name (a string),
// arguments (an object) and _meta (an object without a protocol version,
// which would make the request stateless), each at most once; anything
// else is the SDK's. Keys match exactly, as the SDK's decoder matches them,
// and a key written with escapes is left to it. The arguments are a slice
// of raw, as the SDK would hand them over.
func parseCallParams(raw json.RawMessage) (callParams, bool) {
	var (
		p    callParams
		seen [3]bool
	)
	ok := members(raw, 1, func(key, val []byte) bool {
		switch string(key) {
		case "name":
			if seen[0] || val[0] != '"' {
				return false
			}
			seen[0] = true
			name, ok := jsonString(val)
			p.name = name
			return ok
		case "arguments":
			if seen[1] || val[0] != '{' {
				return false
			}
			seen[1] = true
			p.args = val
			return true
		case "_meta":
			if seen[2] || val[0] != '{' {
				return false
			}
			seen[2] = true
			// The SDK decodes _meta into Go values, and refuses the whole
			// call when a number does not fit a float64.
			return numbersFit(val) &&
				members(val, 2, func(key, _ []byte) bool { return string(key) != mcp.MetaKeyProtocolVersion })
		}
		return false
	})
	return p, ok && p.name != ""
}

// numbersFit reports whether every number in the valid JSON raw parses as
// a float64.
func numbersFit(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			end, ok := skipString(raw, i)
			if !ok {
				return false
			}
			i = end - 1
		case c == '-' || c >= '0' && c <= '9':
			end := i + 1
			for end < len(raw) && (raw[end] == '.' || raw[end] == 'e' || raw[end] == 'E' || raw[end] == '+' || raw[end] == '-' || raw[end] >= '0' && raw[end] <= '9') {
				end++
			}
			if _, err := strconv.ParseFloat(string(raw[i:end]), 64); err != nil {
				return false
			}
			i = end - 1
		}
	}
	return true
}

// tryFast starts req on the fast path and reports whether it did (or
// dropped it, as the SDK drops a repeated id); false leaves it to the SDK.
func (s *session) tryFast(req *jsonrpc.Request) bool {
	if s.srv.sdkOnly || req.Method != "tools/call" || !req.IsCall() || !s.fastReady() {
		return false
	}
	p, ok := parseCallParams(req.Params)
	if !ok {
		return false
	}
	t, ok := s.srv.fastTool(p.name)
	if !ok {
		return false
	}
	s.mu.Lock()
	if s.readDone {
		s.mu.Unlock()
		return false
	}
	if c, dup := s.inflight[req.ID]; dup {
		s.mu.Unlock()
		// The SDK drops a call whose id is in flight, unanswered; it does
		// not know the fast path's, so that case is dropped here.
		return c.cancel != nil
	}
	// Like the SDK's handler contexts, a call's context ends with its
	// cancellation or the end of reading, not with Serve's context.
	ctx, cancel := context.WithCancel(s.base)
	s.inflight[req.ID] = &inflightCall{method: req.Method, cancel: cancel}
	job := fastJob{ctx, cancel, req.ID, t, p.args}
	s.srv.fastCalls.Add(1) // before the call can be answered
	select {
	case s.jobs <- job: // an idle worker takes it
	default:
		s.workers.Add(1)
		go s.worker(job)
	}
	s.mu.Unlock()
	return true
}

// fastJob is one fast call to run.
type fastJob struct {
	ctx    context.Context
	cancel context.CancelFunc
	id     jsonrpc.ID
	t      fastTool
	args   json.RawMessage
}

// maxIdleWorkers is how many workers wait for the next fast call.
const maxIdleWorkers = 2

// worker runs fast calls until the session ends, or enough others wait.
// A call runs on a goroutine that stays rather than a new one: a page
// call's HTTP request grows a goroutine's stack to several times its
// starting size, and a new goroutine grew it again on every call (stack
// copying was about 5% of a call's CPU through hub mcp). A worker whose
// stack the GC shrinks while it waits grows it once, not per call.
func (s *session) worker(job fastJob) {
	defer s.workers.Done()
	for {
		s.runFast(job)
		if s.idle.Add(1) > maxIdleWorkers {
			s.idle.Add(-1)
			return
		}
		select {
		case job = <-s.jobs:
			s.idle.Add(-1)
		case <-s.done:
			s.idle.Add(-1)
			return
		}
	}
}

// fastReady reports whether the initialize answer is out, for a protocol
// without multi-round-trip results: until then the SDK orders calls after
// initialize (and refuses them), and such a protocol's results differ.
// While that answer is being written, it waits for it.
func (s *session) fastReady() bool {
	if s.fastOK.Load() {
		return true
	}
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	return s.fastOK.Load()
}

// askedVersion is the protocolVersion initialize params ask for, as the
// SDK reads it; "" when that is not plain to see.
func askedVersion(params json.RawMessage) string {
	v, n := "", 0
	if len(params) == 0 || !json.Valid(params) || !Members(params, func(key, val []byte) bool {
		if string(key) == "protocolVersion" {
			v, _ = jsonString(val)
			n++
		}
		return true
	}) || n != 1 {
		return ""
	}
	return v
}

// stopFast cancels every fast call: reading has ended, so no cancellation
// or answer can be exchanged any more (the SDK cancels its handlers then).
func (s *session) stopFast() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.readDone {
		s.readDone = true
		close(s.done) // idle workers leave
	}
	for _, c := range s.inflight {
		if c.cancel != nil {
			c.cancel()
		}
	}
}

func (s *session) runFast(job fastJob) {
	defer job.cancel()
	id, t := job.id, job.t
	res, err := s.callFast(job.ctx, t, job.args)
	if err != nil {
		s.Write(context.Background(), &jsonrpc.Response{ID: id, Error: err})
		return
	}
	bp := answerPool.Get().(*[]byte)
	line, start, err := appendAnswer((*bp)[:0], id, res)
	if err != nil {
		// The SDK cannot encode such a result either, and sends nothing.
		s.srv.log.Error("tool result cannot be encoded", "tool", t.original, "err", err)
		s.forget(id)
	} else {
		s.writeAnswer(id, line, start)
	}
	if cap(line) <= maxPooledAnswer {
		*bp = line
		answerPool.Put(bp)
	}
}

// callFast runs the tool, a panic ending the call as the receiving
// middleware ends it.
func (s *session) callFast(ctx context.Context, t fastTool, args json.RawMessage) (res *mcp.CallToolResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.srv.log.Error("mcp handler panic", "method", "tools/call", "panic", fmt.Sprint(r))
			res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
		}
	}()
	return t.call(ctx, t.original, args)
}

// appendAnswer appends the whole answer line, as jsonrpc2 would write it,
// and says where in it the result starts.
func appendAnswer(buf []byte, id jsonrpc.ID, res *mcp.CallToolResult) (line []byte, start int, err error) {
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = appendID(buf, id)
	buf = append(buf, `,"result":`...)
	start = len(buf)
	buf, err = appendCallResult(buf, res)
	return append(buf, "}\n"...), start, err
}

// answerPool recycles answer buffers; one of an image-sized answer is let
// go rather than kept.
var answerPool = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

const maxPooledAnswer = 64 << 10

// forget removes a call from the in-flight set without answering it.
func (s *session) forget(id jsonrpc.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settleLocked(id)
}

// writeAnswer writes a fast call's answer line (its result at start)
// unless the call was cancelled, as Write does for the SDK's answers.
func (s *session) writeAnswer(id jsonrpc.ID, line []byte, start int) {
	s.mu.Lock()
	c := s.settleLocked(id)
	s.mu.Unlock()
	if c != nil && c.cancelled {
		return
	}
	var err error
	if lc, ok := s.conn.(*lineConn); ok {
		err = lc.writeTerminated(context.Background(), line)
	} else {
		// Another transport takes messages, and may keep this one: the
		// line's buffer is reused.
		result := bytes.Clone(line[start : len(line)-len("}\n")])
		err = s.conn.Write(context.Background(), &jsonrpc.Response{ID: id, Result: result})
	}
	if err != nil {
		s.srv.log.Debug("tool answer not delivered", "err", err)
	}
}
