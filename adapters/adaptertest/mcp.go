package adaptertest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MCPClient speaks MCP to a face the way an MCP client does over a
// process's stdio: newline-delimited JSON-RPC, answers matched by id,
// notifications kept in arrival order. Every line it reads must be
// JSON-RPC (stdout is the protocol); any other is kept for Bad. Methods
// return errors rather than failing a test, so testscript commands can use
// it too.
type MCPClient struct {
	w   io.WriteCloser
	wmu sync.Mutex
	ids atomic.Int64

	mu    sync.Mutex
	wait  map[int64]chan map[string]any
	notes []map[string]any
	more  chan struct{} // signalled when a notification arrives
	bad   []string
	done  chan struct{} // closed when the output ends
}

// NewMCPClient reads the face's output from r and writes to its input w.
func NewMCPClient(w io.WriteCloser, r io.Reader) *MCPClient {
	c := &MCPClient{w: w, wait: map[int64]chan map[string]any{}, more: make(chan struct{}, 1), done: make(chan struct{})}
	go c.read(r)
	return c
}

func (c *MCPClient) read(r io.Reader) {
	defer close(c.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
			c.mu.Lock()
			c.bad = append(c.bad, sc.Text())
			c.mu.Unlock()
			continue
		}
		if id, ok := m["id"].(float64); ok {
			c.mu.Lock()
			ch := c.wait[int64(id)]
			delete(c.wait, int64(id))
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		c.mu.Lock()
		c.notes = append(c.notes, m)
		c.mu.Unlock()
		select {
		case c.more <- struct{}{}:
		default:
		}
	}
}

func (c *MCPClient) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.w.Write(append(b, '\n'))
	return err
}

// Call sends a request and returns the whole answer, waiting at most d.
func (c *MCPClient) Call(method string, params any, d time.Duration) (map[string]any, error) {
	id := c.ids.Add(1)
	ch := make(chan map[string]any, 1)
	c.mu.Lock()
	c.wait[id] = ch
	c.mu.Unlock()
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		return m, nil
	case <-c.done:
		return nil, fmt.Errorf("%s: the face's output ended", method)
	case <-time.After(d):
		return nil, fmt.Errorf("%s: no answer within %s", method, d)
	}
}

// Result is Call for a request that must succeed: its result object.
func (c *MCPClient) Result(method string, params any, d time.Duration) (map[string]any, error) {
	m, err := c.Call(method, params, d)
	if err != nil {
		return nil, err
	}
	res, ok := m["result"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s answered %v", method, m)
	}
	return res, nil
}

// Notify sends a notification.
func (c *MCPClient) Notify(method string) error {
	return c.send(map[string]any{"jsonrpc": "2.0", "method": method})
}

// Initialize runs the handshake at version.
func (c *MCPClient) Initialize(version string, d time.Duration) (map[string]any, error) {
	res, err := c.Result("initialize", map[string]any{"protocolVersion": version, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "adaptertest", "version": "1"}}, d)
	if err != nil {
		return nil, err
	}
	return res, c.Notify("notifications/initialized")
}

// ToolResult is a tools/call result: its content blocks, its first text
// block and isError.
type ToolResult struct {
	Content []map[string]any
	Text    string
	IsError bool
}

// Tool calls a tool.
func (c *MCPClient) Tool(name string, args any, d time.Duration) (ToolResult, error) {
	if args == nil {
		args = map[string]any{}
	}
	res, err := c.Result("tools/call", map[string]any{"name": name, "arguments": args}, d)
	if err != nil {
		return ToolResult{}, err
	}
	var tr ToolResult
	tr.IsError, _ = res["isError"].(bool)
	blocks, _ := res["content"].([]any)
	for _, b := range blocks {
		m, _ := b.(map[string]any)
		tr.Content = append(tr.Content, m)
		if s, ok := m["text"].(string); ok && tr.Text == "" {
			tr.Text = s
		}
	}
	return tr, nil
}

// Tools lists the tools: name → description.
func (c *MCPClient) Tools(d time.Duration) ([]string, map[string]string, error) {
	res, err := c.Result("tools/list", map[string]any{}, d)
	if err != nil {
		return nil, nil, err
	}
	var names []string
	desc := map[string]string{}
	list, _ := res["tools"].([]any)
	for _, t := range list {
		m, _ := t.(map[string]any)
		name, _ := m["name"].(string)
		names = append(names, name)
		desc[name], _ = m["description"].(string)
	}
	return names, desc, nil
}

// ToolNames is Tools' names joined by commas.
func (c *MCPClient) ToolNames(d time.Duration) (string, error) {
	names, _, err := c.Tools(d)
	return strings.Join(names, ","), err
}

// Note takes the oldest notification with method that has arrived (or
// arrives within d), dropping the ones before it.
func (c *MCPClient) Note(method string, d time.Duration) (map[string]any, error) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		for i, m := range c.notes {
			if m["method"] == method {
				c.notes = c.notes[i+1:]
				c.mu.Unlock()
				return m, nil
			}
		}
		c.notes = c.notes[:0]
		c.mu.Unlock()
		select {
		case <-c.more:
		case <-c.done:
			return nil, fmt.Errorf("no %s: the face's output ended", method)
		case <-deadline.C:
			return nil, fmt.Errorf("no %s within %s", method, d)
		}
	}
}

// Bad are the lines the face wrote that were not JSON-RPC.
func (c *MCPClient) Bad() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.bad...)
}

// Close closes the face's input (the client went away).
func (c *MCPClient) Close() error { return c.w.Close() }

// Done is closed when the face's output has ended.
func (c *MCPClient) Done() <-chan struct{} { return c.done }

// ErrBadOutput reports non-JSON-RPC lines on a face's stdout.
var ErrBadOutput = errors.New("stdout carried lines that are not JSON-RPC")

// CheckOutput returns ErrBadOutput, with the lines, if any were seen.
func (c *MCPClient) CheckOutput() error {
	if bad := c.Bad(); len(bad) > 0 {
		return fmt.Errorf("%w: %q", ErrBadOutput, bad)
	}
	return nil
}

// DropNotes forgets the notifications received so far, so a later Note
// waits for a new one.
func (c *MCPClient) DropNotes() {
	c.mu.Lock()
	c.notes = nil
	c.mu.Unlock()
}
