package aiui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/hubdev/hub/aiui/tools"
	"github.com/hubdev/hub/hub"
)

// ErrNoBackend means no running backend could be reached.
var ErrNoBackend = errors.New("no aiui backend is running")

// Client talks to a running backend over its authenticated control route.
type Client struct {
	Base       string // http://127.0.0.1:<port>
	Key        string
	Face       string // face id sent with every request, if attached
	PID        int
	HTTP       *http.Client
	streamHTTP *http.Client
}

// Locate reads the control file and checks that the backend answers.
func Locate(ctx context.Context, d hub.Dirs) (*Client, error) {
	data, err := os.ReadFile(ControlPath(d))
	if err != nil {
		return nil, fmt.Errorf("%w (no %s)", ErrNoBackend, ControlPath(d))
	}
	var cf ControlFile
	if err := json.Unmarshal(data, &cf); err != nil || cf.Port == 0 || cf.Key == "" {
		return nil, fmt.Errorf("%w (unreadable %s)", ErrNoBackend, ControlPath(d))
	}
	c := NewClient(cf.Port, cf.Key)
	c.PID = cf.PID
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := c.Info(pctx); err != nil {
		return nil, fmt.Errorf("%w (stale control file for pid %d: %v)", ErrNoBackend, cf.PID, err)
	}
	return c, nil
}

// NewClient builds a client for a known port and key.
func NewClient(port int, key string) *Client {
	return &Client{Base: "http://" + hub.LoopbackHost + ":" + strconv.Itoa(port), Key: key,
		HTTP: &http.Client{Timeout: 60 * time.Second}, streamHTTP: &http.Client{}}
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
	r, err := http.NewRequestWithContext(ctx, method, c.Base+path, rd)
	if err != nil {
		return nil, err
	}
	r.Header.Set("Authorization", "Bearer "+c.Key)
	if c.Face != "" {
		r.Header.Set(FaceHeader, c.Face)
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	return r, nil
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	r, err := c.req(ctx, method, path, body)
	if err != nil {
		return err
	}
	resp, err := c.HTTP.Do(r)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoBackend, err)
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
		return fmt.Errorf("control %s: %d %s", path, resp.StatusCode, e.Error)
	}
	return json.Unmarshal(data, out)
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
	return out, c.do(ctx, http.MethodPost, "/control/call", req, &out)
}

// Reload triggers a hot reload.
func (c *Client) Reload(ctx context.Context) (map[string]any, error) {
	var out map[string]any
	return out, c.do(ctx, http.MethodPost, "/control/reload", nil, &out)
}

func (c *Client) openStream(ctx context.Context, path string, fn func(line []byte) error) error {
	r, err := c.req(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	resp, err := c.streamHTTP.Do(r)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %v", ErrNoBackend, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("control %s: %d", path, resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
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
	return sc.Err()
}

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
