package stitchslop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// MsgConn is one JSON-RPC 2.0 message stream: newline-delimited stdio in
// production, the MCP SDK's in-memory transport in tests.
type MsgConn interface {
	// Read returns the next message; io.EOF when the peer is gone.
	Read(ctx context.Context) ([]byte, error)
	// Write sends one message.
	Write(ctx context.Context, msg []byte) error
}

// maxMCPLine bounds one incoming JSON-RPC line.
const maxMCPLine = 32 << 20

// LineConn is a MsgConn over a reader and writer carrying one JSON message
// per '\n'-terminated line (MCP stdio).
type LineConn struct {
	r  *bufio.Reader
	mu sync.Mutex
	w  io.Writer
}

// NewLineConn wraps r and w.
func NewLineConn(r io.Reader, w io.Writer) *LineConn {
	return &LineConn{r: bufio.NewReaderSize(r, 64<<10), w: w}
}

// errLineTooLong marks an over-long incoming line; the rest of it is skipped.
var errLineTooLong = errors.New("message line too long")

// Read returns the next non-blank line without its terminator.
func (c *LineConn) Read(context.Context) ([]byte, error) {
	for {
		var line []byte
		tooLong := false
		for {
			chunk, err := c.r.ReadSlice('\n')
			if !tooLong {
				if len(line)+len(chunk) > maxMCPLine {
					tooLong, line = true, nil
				} else {
					line = append(line, chunk...)
				}
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil {
				if err == io.EOF && len(bytes.TrimSpace(line)) > 0 && !tooLong {
					return bytes.TrimSpace(line), nil
				}
				return nil, err
			}
			break
		}
		if tooLong {
			return nil, errLineTooLong
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return line, nil
		}
	}
}

// Write writes msg and a newline in one call.
func (c *LineConn) Write(_ context.Context, msg []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.w.Write(append(msg, '\n'))
	return err
}

// JSON-RPC error codes.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcMethodNotFound = -32601
	rpcInvalidParams  = -32602
)

// mcpSession is one MCP client on one MsgConn.
type mcpSession struct {
	s           *Server
	conn        MsgConn
	onInit      func()
	initialized atomic.Bool

	mu       sync.Mutex
	inflight map[string]context.CancelFunc
	wg       sync.WaitGroup
}

// ServeMCP runs the MCP face over conn until conn's Read fails (stdin
// closed: io.EOF) or ctx ends. onInit runs once, at the first initialize
// (the standalone bridge marks itself owned there, §2.7/§2.8). It reports
// whether initialize was received, which decides whether a closed stdin
// ends the process (§2.8).
func (s *Server) ServeMCP(ctx context.Context, conn MsgConn, onInit func()) (initialized bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	ms := &mcpSession{s: s, conn: conn, onInit: onInit, inflight: map[string]context.CancelFunc{}}
	s.sessionAdd(1)
	// Notifications are written by their own goroutine: the page's read
	// loop that triggers them must never block on a slow MCP client.
	notes := make(chan struct{}, 64)
	unsub := s.Subscribe(func() {
		select {
		case notes <- struct{}{}:
		default: // 64 pending already say the same thing
		}
	})
	ms.wg.Add(1)
	go func() {
		defer ms.wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-notes:
				if ms.initialized.Load() {
					ms.write(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`))
				}
			}
		}
	}()
	defer func() {
		unsub()
		cancel()
		ms.wg.Wait()
		s.sessionAdd(-1)
	}()
	for {
		msg, err := conn.Read(ctx)
		if errors.Is(err, errLineTooLong) {
			ms.writeError(ctx, nil, rpcInvalidRequest, "message larger than the line limit")
			continue
		}
		if err != nil {
			return ms.initialized.Load(), err
		}
		if ctx.Err() != nil {
			return ms.initialized.Load(), ctx.Err()
		}
		ms.dispatch(ctx, msg)
	}
}

func (ms *mcpSession) write(ctx context.Context, b []byte) {
	if err := ms.conn.Write(ctx, b); err != nil {
		ms.s.log.Debug("mcp write failed", "err", err)
	}
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (ms *mcpSession) writeResult(ctx context.Context, id json.RawMessage, result any) {
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", id, result})
	if err != nil {
		ms.writeError(ctx, id, -32603, "cannot encode result")
		return
	}
	ms.write(ctx, b)
}

func (ms *mcpSession) writeError(ctx context.Context, id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, msg}})
	ms.write(ctx, b)
}

// rpcMessage is any incoming JSON-RPC message.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// dispatch handles one message: notifications are noted and never
// answered; requests run in their own goroutine so a blocking tools/call
// never delays a ping.
func (ms *mcpSession) dispatch(ctx context.Context, raw []byte) {
	ms.s.agentActivity()
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		ms.writeError(ctx, nil, rpcInvalidRequest, "batches are not supported")
		return
	}
	var m rpcMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		ms.writeError(ctx, nil, rpcParseError, "parse error: "+err.Error())
		return
	}
	if m.Method == nil {
		return // a response or junk without a method: nothing to answer
	}
	method := *m.Method
	if len(m.ID) == 0 { // notification
		switch method {
		case "notifications/initialized":
			ms.s.log.Debug("mcp client initialized")
		case "notifications/cancelled":
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if json.Unmarshal(m.Params, &p) == nil {
				ms.mu.Lock()
				if c := ms.inflight[string(p.RequestID)]; c != nil {
					c()
				}
				ms.mu.Unlock()
			}
		}
		return
	}
	if string(m.ID) == "null" || (m.ID[0] != '"' && m.ID[0] != '-' && (m.ID[0] < '0' || m.ID[0] > '9')) {
		ms.writeError(ctx, nil, rpcInvalidRequest, "id must be a string or a number")
		return
	}
	id := m.ID
	if method == "initialize" {
		// Answered inline so its result precedes any list_changed it enables.
		ms.handleInitialize(ctx, id, m.Params)
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	ms.mu.Lock()
	ms.inflight[string(id)] = cancel
	ms.mu.Unlock()
	ms.wg.Add(1)
	go func() {
		defer ms.wg.Done()
		defer func() {
			ms.mu.Lock()
			delete(ms.inflight, string(id))
			ms.mu.Unlock()
			cancel()
		}()
		defer func() {
			if r := recover(); r != nil {
				ms.s.log.Error("mcp handler panic", "method", method, "panic", fmt.Sprint(r))
				ms.writeError(ctx, id, -32603, "internal error")
			}
		}()
		ms.handle(rctx, id, method, m.Params)
	}()
}

func (ms *mcpSession) handleInitialize(ctx context.Context, id json.RawMessage, params json.RawMessage) {
	var p struct {
		ProtocolVersion any `json:"protocolVersion"`
	}
	if len(params) > 0 && json.Unmarshal(params, &p) != nil {
		ms.writeError(ctx, id, rpcInvalidParams, "initialize params must be an object")
		return
	}
	version, _ := p.ProtocolVersion.(string)
	if version == "" {
		version = "2025-06-18"
	}
	// Ownership (§2.7/§2.8) starts at initialize, before the answer goes
	// out: a client that has its result must find the idle exit cancelled.
	if !ms.initialized.Swap(true) && ms.onInit != nil {
		ms.onInit()
	}
	ms.writeResult(ctx, id, map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
		"serverInfo":      map[string]any{"name": ServerName, "version": Version},
		"instructions":    mcpInstructions,
	})
}

// mcpInstructions tell the model what to do with no page (§3.2): wait,
// because the page attaches on its own; involve the user only on timeout.
const mcpInstructions = "This server drives the user's Stitch Slop tab (a browser embroidery digitizer). " +
	"The tab connects to this bridge on its own: it polls and attaches with nothing for the user to press. " +
	"If no tab is connected yet, call wait_for_connection — it blocks until the tab attaches and then shows the scene. " +
	"The page's own tools appear (tools/list_changed) once it is attached. " +
	"Only if wait_for_connection times out should you involve the user, and then ask whether their Allow agent connections switch is on. " +
	"connection_status shows connection attempts and refusals when the tab does not attach."

func (ms *mcpSession) handle(ctx context.Context, id json.RawMessage, method string, params json.RawMessage) {
	switch method {
	case "ping":
		ms.writeResult(ctx, id, struct{}{})
	case "tools/list":
		ms.writeResult(ctx, id, map[string]any{"tools": ms.s.mcpTools()})
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(params, &p); err != nil || p.Name == "" {
			ms.writeError(ctx, id, rpcInvalidParams, "tools/call needs params.name")
			return
		}
		if len(p.Arguments) > 0 && string(p.Arguments) != "null" && !isJSONObject(p.Arguments) {
			ms.writeError(ctx, id, rpcInvalidParams, "tools/call params.arguments must be an object")
			return
		}
		res := ms.s.callTool(ctx, p.Name, p.Arguments)
		if ctx.Err() != nil {
			return // cancelled by the client (or the session ended): no answer is due
		}
		ms.writeResult(ctx, id, res)
	default:
		ms.writeError(ctx, id, rpcMethodNotFound, "method not found: "+clip(method, 80))
	}
}
