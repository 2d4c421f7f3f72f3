package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/portowner"
)

// Client drives a running control plane (standalone or under the hub),
// found through the control file. Its key goes only to a socket of this
// user's: each new connection is checked before a byte is written
// (portowner.Dialer), so a port the file names but another user holds is
// refused, naming the holder.
type Client struct {
	base string
	key  string
	http *http.Client
}

// Locate reads the control file. No file, or one whose control plane does
// not answer, is exit 3 with what to run.
func Locate(d hub.Dirs) (*Client, error) {
	cf, err := ReadFile(d)
	if err != nil {
		return nil, hub.Exit(hub.ExitNotRunning, "hub geturl: no geturl control plane is running ("+shortErr(err)+"); start one with `hub geturl serve` or `hub start`")
	}
	dialer := &portowner.Dialer{Source: "the control file " + FilePath(d)}
	return &Client{base: "http://" + hub.LoopbackHost + ":" + strconv.Itoa(cf.ControlPort), key: cf.Key,
		http: &http.Client{Timeout: 30 * time.Second, Transport: dialer.Transport()}}, nil
}

func shortErr(err error) string {
	var pe interface{ Unwrap() error }
	if errors.As(err, &pe) && errors.Is(err, syscall.ENOENT) {
		return "no control file"
	}
	return err.Error()
}

// RemoteError is a refusal the control plane answered (exit 1).
type RemoteError struct {
	Code    string `json:"error"`
	Message string `json:"message"`
}

func (e *RemoteError) Error() string { return e.Message }

// ExitCode makes a refusal exit 1.
func (e *RemoteError) ExitCode() int { return hub.ExitFailed }

// Do sends one keyed request to the control plane (path such as /api/status,
// body JSON-encoded when not nil) and decodes the answer into out; a
// refusal is a *RemoteError.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set(KeyHeader, c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if re, ok := errors.AsType[*portowner.RefusedError](err); ok {
			if re.Foreign() {
				// ours is gone from there: a stale file
				return hub.Exit(hub.ExitNotRunning, "hub geturl: "+re.Error())
			}
			return hub.Exit(hub.ExitFailed, "hub geturl: "+re.Error())
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			return hub.Exit(hub.ExitNotRunning, "hub geturl: stale control file: nothing listens on "+c.base+" (the control plane was killed?)")
		}
		return hub.Exit(hub.ExitFailed, "hub geturl: "+err.Error())
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return hub.Exit(hub.ExitFailed, "hub geturl: reading the answer: "+err.Error())
	}
	if resp.StatusCode == http.StatusUnauthorized {
		return hub.Exit(hub.ExitNotRunning, "hub geturl: stale control file: the control plane on "+c.base+" rejected its key")
	}
	var head struct {
		OK bool `json:"ok"`
		RemoteError
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return hub.Exit(hub.ExitFailed, fmt.Sprintf("hub geturl: the control plane answered HTTP %d with something that is not JSON", resp.StatusCode))
	}
	if !head.OK {
		return &head.RemoteError
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// Status is GET /api/status.
func (c *Client) Status(ctx context.Context) (StatusInfo, error) {
	var s StatusInfo
	err := c.Do(ctx, http.MethodGet, "/api/status", nil, &s)
	return s, err
}
