package aiui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/aiui/tools"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/portowner"
)

// ErrNoBackend means no running backend could be reached.
var ErrNoBackend = errors.New("no aiui backend is running")

// Client talks to a running backend over its authenticated control route.
//
// Its keys go only to a socket of this user's: every connection it dials
// is checked before a byte is written (portowner.Dialer), so a port the
// control file names but another user now holds (our backend died there,
// or lost the race for it) gets a refusal naming the holder, not the key.
type Client struct {
	Base string // http://127.0.0.1:<port>
	Key  string
	// PromptKey is the backend's per-start prompt key (POST /prompt).
	PromptKey string
	Face      string // face id sent with every request, if attached
	PID       int
	// Kind is who started the backend, from the control file (KindHub,
	// KindServe, KindMCP).
	Kind       string
	HTTP       *http.Client
	streamHTTP *http.Client
	// callTimeout is the backend's page-tool call timeout (from its info):
	// a call's request may take that long before the backend answers.
	callTimeout time.Duration

	// dirs is where Locate found the control file: a request that fails
	// because the backend restarted (gone, or a fresh key) re-reads it.
	dirs *hub.Dirs
	mu   sync.Mutex // guards Base, Key, PromptKey, PID and Kind once the client is shared
}

// Locate reads the control file and checks that the backend answers.
func Locate(ctx context.Context, d hub.Dirs) (*Client, error) {
	cf, err := readControl(d)
	switch {
	case errors.Is(err, hub.ErrUnsafeFile):
		return nil, err // its key may be planted or leaked: refuse, naming the fix
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w (no %s)", ErrNoBackend, ControlPath(d))
	case err != nil:
		return nil, fmt.Errorf("%w (unreadable %s)", ErrNoBackend, ControlPath(d))
	}
	c := newClient(cf.Port, cf.Key, "the control file "+ControlPath(d))
	c.PID, c.Kind, c.PromptKey = cf.PID, cf.Kind, cf.PromptKey
	c.dirs = &d
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	info, err := c.Info(pctx)
	if err != nil {
		c.CloseIdleConnections()
		if errors.Is(err, portowner.ErrRefused) {
			// the refusal names the file and the holder
			return nil, fmt.Errorf("%w (%w)", ErrNoBackend, refusal(err))
		}
		return nil, fmt.Errorf("%w (stale control file for pid %d: %v)", ErrNoBackend, cf.PID, err)
	}
	if ms, ok := info["callTimeoutMs"].(float64); ok && ms > 0 {
		c.callTimeout = time.Duration(ms) * time.Millisecond
	}
	return c, nil
}

// NewClient builds a client for a known port and key.
func NewClient(port int, key string) *Client { return newClient(port, key, "") }

// newClient is NewClient whose refusals say what named the port (see
// portowner.Dialer.Source).
func newClient(port int, key, source string) *Client {
	// One transport for both clients: a stream and the calls beside it
	// share the checked keep-alive connections.
	tr := (&portowner.Dialer{Source: source}).Transport()
	return &Client{Base: "http://" + hub.LoopbackHost + ":" + strconv.Itoa(port), Key: key,
		HTTP: &http.Client{Timeout: 60 * time.Second, Transport: tr}, streamHTTP: &http.Client{Transport: tr}}
}

// CloseIdleConnections drops the client's idle keep-alive connections: a
// client has its own (each was checked when dialled), kept up to 90 s
// after their last use otherwise.
func (c *Client) CloseIdleConnections() {
	c.HTTP.CloseIdleConnections()
	c.streamHTTP.CloseIdleConnections()
}

// refusal is the portowner refusal in err, without the request's URL
// around it: it names the address already.
func refusal(err error) error {
	if re, ok := errors.AsType[*portowner.RefusedError](err); ok {
		return re
	}
	return err
}

// relocate re-reads the control file after a failed request and reports
// whether it names a different backend (new port or key) to retry with.
func (c *Client) relocate() bool {
	if c.dirs == nil {
		return false
	}
	data, err := hub.ReadPrivateFile(ControlPath(*c.dirs), maxControlFile)
	if err != nil {
		return false
	}
	var cf ControlFile
	if json.Unmarshal(data, &cf) != nil || cf.Port == 0 || cf.Key == "" {
		return false
	}
	base := "http://" + hub.LoopbackHost + ":" + strconv.Itoa(cf.Port)
	c.mu.Lock()
	defer c.mu.Unlock()
	if base == c.Base && hub.SecretEqual(cf.Key, c.Key) {
		return false
	}
	c.Base, c.Key, c.PID, c.Kind, c.PromptKey = base, cf.Key, cf.PID, cf.Kind, cf.PromptKey
	return true
}

// backendKind is the Kind of the backend the client last located.
func (c *Client) backendKind() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Kind
}

// send issues a request, retrying once against a relocated backend when
// the first attempt failed or was refused for its key. Only a GET is
// retried after a failure that may have reached the backend: a POST (a
// page-tool call) that broke mid-way may have run, and sending it to the
// next backend could run it twice.
func (c *Client) send(ctx context.Context, hc *http.Client, method, path string, body any) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		r, err := c.req(ctx, method, path, body)
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(r)
		failed := err != nil && ctx.Err() == nil && (method == http.MethodGet || unsent(err))
		stale := failed || err == nil && resp.StatusCode == http.StatusUnauthorized
		if stale && attempt == 0 && c.relocate() {
			if resp != nil {
				resp.Body.Close()
			}
			continue
		}
		return resp, err
	}
}

func (c *Client) req(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	c.mu.Lock()
	base, key := c.Base, c.Key
	if path == promptPath {
		key = c.PromptKey // the weaker key for the route that takes it
	}
	c.mu.Unlock()
	r, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return nil, err
	}
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	if c.Face != "" {
		r.Header.Set(FaceHeader, c.Face)
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	return r, nil
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	return c.doWith(ctx, c.HTTP, method, path, body, out)
}

func (c *Client) doWith(ctx context.Context, hc *http.Client, method, path string, body, out any) error {
	resp, err := c.send(ctx, hc, method, path, body)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoBackend, refusal(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		json.Unmarshal(data, &e)
		return &statusError{path, resp.StatusCode, e.Error}
	}
	return json.Unmarshal(data, out)
}

// statusError is a control request the backend refused with an error
// status: it did not run.
type statusError struct {
	path   string
	status int
	msg    string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("control %s: %d %s", e.path, e.status, e.msg)
}

// unsent reports whether a failed control request is known not to have
// run: it could not connect, or the backend refused it.
func unsent(err error) bool {
	var op *net.OpError
	var se *statusError
	// A 4xx is the request refused (its key, its body); a 5xx may come
	// from a handler that had begun.
	// A connection refused for its holder (another user's) carried
	// nothing.
	return errors.As(err, &se) && se.status < 500 || errors.As(err, &op) && op.Op == "dial" ||
		errors.Is(err, portowner.ErrRefused)
}

// Info is the backend's info (pid, port, generation, pageTools, faces …).
func (c *Client) Info(ctx context.Context) (map[string]any, error) {
	var out map[string]any
	return out, c.do(ctx, http.MethodGet, "/control/info", nil, &out)
}

// Tools is the page-tool directory.
func (c *Client) Tools(ctx context.Context) ([]tools.Registration, error) {
	var out struct {
		Registrations []tools.Registration `json:"registrations"`
	}
	return out.Registrations, c.do(ctx, http.MethodGet, "/control/tools", nil, &out)
}

// Call routes a page-tool call.
func (c *Client) Call(ctx context.Context, req tools.CallRequest) (CallResult, error) {
	var out CallResult
	hc := c.HTTP
	if limit := c.callTimeout + 15*time.Second; hc.Timeout > 0 && limit > hc.Timeout {
		// the backend answers when the page does or its call timeout
		// (call_timeout_ms) ends: waiting less would report a running
		// backend as gone while the call may still run
		cp := *hc
		cp.Timeout = limit
		hc = &cp
	}
	return out, c.doWith(ctx, hc, http.MethodPost, "/control/call", req, &out)
}

// promptPath is POST /prompt, which the client sends with the prompt key.
const promptPath = "/prompt"

// Prompt delivers text through POST /prompt with the backend's prompt key,
// so the agent sees it from a keyed local process (SenderKeyed) rather
// than an unverified one; meta is the optional client context (tab,
// source root) that frames it and routes it to a face. It returns the
// prompt's seq. A refused prompt (a stale key after a restart) is retried
// once against the relocated backend: it was not delivered.
func (c *Client) Prompt(ctx context.Context, text string, meta *frame.HelloMeta) (int64, error) {
	var out struct {
		Seq int64 `json:"seq"`
	}
	err := c.do(ctx, http.MethodPost, promptPath, promptBody{Text: text, Meta: meta}, &out)
	return out.Seq, err
}

// Reload triggers a hot reload.
func (c *Client) Reload(ctx context.Context) (map[string]any, error) {
	var out map[string]any
	return out, c.do(ctx, http.MethodPost, "/control/reload", nil, &out)
}

func (c *Client) openStream(ctx context.Context, path string, fn func(line []byte) error) error {
	resp, err := c.send(ctx, c.streamHTTP, http.MethodGet, path, nil)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %w", ErrNoBackend, refusal(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("control %s: %d", path, resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	cut := false
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, '\n'); i >= 0 || !atEOF || len(data) == 0 {
			return bufio.ScanLines(data, atEOF)
		}
		// an unterminated last line is what a stream cut mid-write
		// leaves, never a whole line to parse
		cut = true
		return len(data), nil, nil
	})
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := fn(sc.Bytes()); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := sc.Err(); cut || errors.Is(err, io.ErrUnexpectedEOF) {
		return ErrStreamCut
	} else if err != nil {
		return err
	}
	return nil
}

// ErrStreamCut is a stream that ended inside a line or a chunk: the
// backend went away (stopped, or dropped a reader that stopped reading)
// in the middle of writing to it.
var ErrStreamCut = errors.New("the backend stopped in the middle of the stream")

// Prompts streams the prompt record (and, with follow, new prompts).
func (c *Client) Prompts(ctx context.Context, follow bool, fn func(Record, []byte) error) error {
	path := "/control/prompts"
	if follow {
		path += "?follow=1"
	}
	return c.openStream(ctx, path, func(line []byte) error {
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		return fn(r, line)
	})
}

// Events attaches as a face and streams its events until ctx is done or
// the backend goes away.
func (c *Client) Events(ctx context.Context, cwd string, fn func(FaceEvent) error) error {
	q := url.Values{"id": {c.Face}, "cwd": {cwd}}
	return c.openStream(ctx, "/control/events?"+q.Encode(), func(line []byte) error {
		var ev FaceEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return err
		}
		if ev.Type == "ping" {
			return nil
		}
		return fn(ev)
	})
}
