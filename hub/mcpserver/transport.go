package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxLine bounds one incoming JSON-RPC line: generous, because tool
// arguments can be large, but finite, because the peer is not trusted.
const DefaultMaxLine = 32 << 20

// LineTransport is MCP's stdio transport: one JSON-RPC message per
// '\n'-terminated line on In, answers and notifications on Out.
//
// It exists because the SDK's IOTransport ends the session on the first
// line that does not decode. JSON-RPC 2.0 asks for an answer instead, and
// the session carries on: invalid JSON gets -32700 with id null; a batch,
// a non-object, a bad id or a line over MaxLine gets -32600 with id null.
// Those answers are written here, so the SDK only ever sees valid messages.
//
// A LineTransport is used for one Connect. It does not own In: closing the
// connection stops reading, but a reader blocked on In stays blocked until
// In ends (stdin of a process that is exiting, in practice).
type LineTransport struct {
	In  io.Reader
	Out io.Writer
	// MaxLine bounds one incoming line in bytes; 0 means DefaultMaxLine.
	MaxLine int
}

// Stdio is the transport every face in this repository serves MCP on:
// stdin and stdout of the process. Nothing else may write to stdout.
func Stdio() *LineTransport { return &LineTransport{In: os.Stdin, Out: os.Stdout} }

var _ mcp.Transport = (*LineTransport)(nil)

// Connect starts reading In.
func (t *LineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := t.conn()
	c.start(nil)
	return c, nil
}

// conn is a connection that has not started reading.
func (t *LineTransport) conn() *lineConn {
	if _, ok := t.Out.(*os.File); ok {
		catchSIGPIPE()
	}
	limit := t.MaxLine
	if limit <= 0 {
		limit = DefaultMaxLine
	}
	return &lineConn{out: t.Out, lr: newLineReader(t.In, limit, 64<<10), msgs: make(chan msgOrErr), closed: make(chan struct{})}
}

// start starts reading. see, when not nil, runs on the reading goroutine
// for each message before Read may return it, and keeps the ones it takes
// for itself (the session's fast path: see fastcall.go).
func (c *lineConn) start(see func(jsonrpc.Message) bool) {
	// Reading happens on its own goroutine so that Close can unblock Read,
	// which the mcp.Connection contract asks for.
	go c.readLoop(see)
}

type msgOrErr struct {
	msg jsonrpc.Message
	err error
}

// lineConn is one LineTransport connection.
type lineConn struct {
	out io.Writer
	wmu sync.Mutex
	lr  *lineReader

	msgs      chan msgOrErr
	closed    chan struct{}
	closeOnce sync.Once
	failed    atomic.Pointer[outputError] // the write that ended the connection
}

// outputError is a write to the client that failed: it closed its end of
// our output (stdout), which is going away as surely as closing our input
// is. The connection ends with it, and Serve reports the client gone.
type outputError struct{ err error }

func (e *outputError) Error() string {
	return "the client closed its end of the output: " + e.err.Error()
}
func (e *outputError) Unwrap() error { return e.err }

// readLoop reads and decodes lines, answering invalid ones itself, until
// In ends or the connection closes.
func (c *lineConn) readLoop(see func(jsonrpc.Message) bool) {
	ctx := context.Background()
	for {
		line, err := c.lr.next()
		var item msgOrErr
		switch {
		case err == errLineTooLong:
			c.answerError(ctx, jsonrpc.CodeInvalidRequest, "message larger than the line limit")
			continue
		case err != nil:
			item.err = err
		default:
			msg, rerr := decodeLine(line)
			if rerr != nil {
				c.answerError(ctx, rerr.Code, rerr.Message)
				continue
			}
			if msg == nil {
				continue
			}
			if see != nil {
				select {
				case <-c.closed:
					return // the session is over: nothing more to see
				default:
				}
				if !see(msg) {
					continue
				}
			}
			item.msg = msg
		}
		select {
		case c.msgs <- item:
		case <-c.closed:
			return
		}
		if item.err != nil {
			return
		}
	}
}

// Read returns the next valid message.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		if f := c.failed.Load(); f != nil {
			return nil, f
		}
		return nil, io.EOF
	case item := <-c.msgs:
		return item.msg, item.err
	}
}

// decodeLine turns one line into a message. It returns an error to answer
// (with id null) for an invalid one, and neither for a line to ignore: a
// response that cannot match a request of ours (no id, nothing in it).
func decodeLine(line []byte) (jsonrpc.Message, *jsonrpc.Error) { return decodeWith(line, true) }

// wireLine is what a line holds, as encoding/json decodes it.
type wireLine struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

var wireNames = [][]byte{[]byte("jsonrpc"), []byte("id"), []byte("method"), []byte("params"), []byte("result"), []byte("error")}

// decodeWith is decodeLine; scan says whether a plain line may skip
// encoding/json's reflection (the tests compare both ways).
func decodeWith(line []byte, scan bool) (jsonrpc.Message, *jsonrpc.Error) {
	if !utf8.Valid(line) {
		// JSON text is UTF-8 (RFC 8259 §8.1); encoding/json would take
		// the bytes, and a tool's arguments would carry them on to a
		// page, whose browser closes a WebSocket on invalid UTF-8 (1007).
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: the message is not valid UTF-8"}
	}
	if line[0] == '[' {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "batches are not supported"}
	}
	w, ok := wireLine{}, false
	if scan {
		w, ok = scanLine(line)
	}
	if !ok {
		w = wireLine{}
		if err := json.Unmarshal(line, &w); err != nil {
			var syntax *json.SyntaxError
			if errors.As(err, &syntax) || !json.Valid(line) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: " + err.Error()}
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "a message must be a JSON object"}
		}
	}
	v, _ := jsonString(w.JSONRPC)
	version := v == "2.0"
	if present(w.Method) {
		if !version {
			// JSON-RPC 2.0 §4: "MUST be exactly "2.0"", as the SDK's
			// own decoder holds every message to.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: `"jsonrpc" must be exactly "2.0"`}
		}
		method, ok := jsonString(w.Method)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "method must be a string"}
		}
		if len(w.ID) == 0 {
			return &jsonrpc.Request{Method: method, Params: w.Params}, nil
		}
		id, ok := parseID(w.ID)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "id must be a string or an integer"}
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: w.Params}, nil
	}
	if len(w.Result) == 0 && len(w.Error) == 0 {
		// Neither a request nor a response: an invalid Request, which
		// JSON-RPC 2.0 §7 answers ({"foo": "boo"} in its examples).
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "a request needs a method"}
	}
	id, ok := parseID(w.ID)
	if !ok || !version || (!present(w.Result) && !present(w.Error)) {
		return nil, nil // a response that matches nothing, or not JSON-RPC 2.0; never answered
	}
	resp := &jsonrpc.Response{ID: id, Result: w.Result}
	if present(w.Error) {
		var we jsonrpc.Error
		if json.Unmarshal(w.Error, &we) != nil {
			we = jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "malformed error object"}
		}
		resp.Error = &we
	}
	return resp, nil
}

// scanLine finds the members of a plain line as encoding/json would,
// without its reflection, which cost more than the rest of reading a
// call: a valid object whose keys are written without escapes and none
// twice or in another case (encoding/json matches any case, and keeps
// the last of a repeated key). For anything else, false.
func scanLine(line []byte) (w wireLine, ok bool) {
	if line[0] != '{' || !json.Valid(line) {
		return w, false
	}
	ok = Members(line, func(key, val []byte) bool {
		var f *json.RawMessage
		switch string(key) {
		case "jsonrpc":
			f = &w.JSONRPC
		case "id":
			f = &w.ID
		case "method":
			f = &w.Method
		case "params":
			f = &w.Params
		case "result":
			f = &w.Result
		case "error":
			f = &w.Error
		default:
			for _, name := range wireNames {
				if bytes.EqualFold(key, name) {
					return false
				}
			}
			return true
		}
		if *f != nil {
			return false
		}
		*f = val // line is the reader's own copy
		return true
	})
	return w, ok
}

// jsonString decodes a JSON string; false for any other value.
func jsonString(raw []byte) (string, bool) {
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// parseID accepts what MCP allows as a request id: a string or an integer.
// Fractions, and integers past ±2^53 where the SDK's float64 ids lose
// digits, are refused rather than rounded: rounding would answer a
// different id than the one asked.
func parseID(raw json.RawMessage) (jsonrpc.ID, bool) {
	if len(raw) == 0 {
		return jsonrpc.ID{}, false
	}
	if raw[0] == '"' {
		s, ok := jsonString(raw)
		if !ok || !exactString(raw, s) {
			return jsonrpc.ID{}, false
		}
		id, err := jsonrpc.MakeID(s)
		return id, err == nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n <= -1<<53 || n >= 1<<53 {
		// MakeID takes a float64, exact only below 2^53.
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(float64(n))
	return id, err == nil
}

// exactString reports whether s, decoded from the JSON string raw, is what
// raw says: invalid UTF-8 and lone surrogates (\ud800) decode to U+FFFD, so
// two different ids could become one, and an answer would carry an id the
// client never sent.
func exactString(raw []byte, s string) bool {
	if !utf8.Valid(raw) {
		return false
	}
	n := strings.Count(s, "\uFFFD")
	if n == 0 {
		return true
	}
	lower := bytes.ToLower(raw)
	return n == bytes.Count(raw, []byte("\uFFFD"))+bytes.Count(lower, []byte(`\ufffd`))
}

// answerError writes an error answer with id null: the id of a message we
// could not read is unknown (JSON-RPC 2.0 §5).
func (c *lineConn) answerError(ctx context.Context, code int64, msg string) error {
	b, _ := json.Marshal(struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      *int           `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", nil, &jsonrpc.Error{Code: code, Message: msg}})
	return c.writeLine(ctx, b)
}

// Write sends one message as one line.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && !resp.ID.IsValid() {
		// The SDK omits the id of an answer it cannot attribute; JSON-RPC
		// requires "id": null there.
		return c.answerError(ctx, wireCode(resp.Error), errText(resp.Error))
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(ctx, b)
}

func (c *lineConn) writeLine(ctx context.Context, b []byte) error {
	return c.writeTerminated(ctx, append(b, '\n'))
}

// writeTerminated writes line, which ends in '\n', as one Write call, so
// no other line can land inside it.
func (c *lineConn) writeTerminated(ctx context.Context, line []byte) error {
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.out.Write(line); err != nil {
		oe := &outputError{err}
		c.failed.CompareAndSwap(nil, oe)
		c.Close()
		return oe
	}
	return nil
}

// Close stops reading; a Read in progress returns io.EOF.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID is empty: a stdio connection is its own session.
func (c *lineConn) SessionID() string { return "" }

// wireCode is the JSON-RPC code an error carries, -32603 when it has none.
func wireCode(err error) int64 {
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code != 0 {
		return we.Code
	}
	return jsonrpc.CodeInternalError
}

func errText(err error) string {
	if err == nil {
		return "internal error"
	}
	return err.Error()
}
