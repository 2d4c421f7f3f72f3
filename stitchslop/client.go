package stitchslop

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/portowner"
)

// shellClient drives a running bridge over its control plane (§4).
type shellClient struct {
	ConfigDir string
	Port      int
	Stdout    io.Writer
	Stderr    io.Writer
}

// pickSession applies §4.1: prune dead pids; with --port use that one; else
// one live bridge is used, several need --port, none is exit 3.
func (c *shellClient) pickSession() (sessionFile, error) {
	scan := scanSessions(c.ConfigDir)
	for _, b := range scan.Bad {
		fmt.Fprintf(c.Stderr, "ignoring an unreadable session file: %s\n", b)
	}
	if c.Port != 0 {
		for _, s := range scan.Live {
			if s.Port == c.Port {
				return s, nil
			}
		}
		for _, s := range scan.Stale {
			if s.Port == c.Port {
				return s, hub.Exit(hub.ExitNotRunning, fmt.Sprintf("hub stitchslop: stale session file for port %d: its bridge (pid %d) is gone; start a bridge", c.Port, s.PID))
			}
		}
		return sessionFile{}, hub.Exit(hub.ExitNotRunning, fmt.Sprintf("hub stitchslop: no Stitch Slop bridge on port %d (no session file in %s)", c.Port, c.ConfigDir))
	}
	switch len(scan.Live) {
	case 1:
		return scan.Live[0], nil
	case 0:
		msg := "hub stitchslop: no Stitch Slop bridge is running (no live session file in " + c.ConfigDir + ")"
		if len(scan.Stale) > 0 {
			msg += fmt.Sprintf("; %d stale session file(s) from bridges that are gone were ignored", len(scan.Stale))
		}
		return sessionFile{}, hub.Exit(hub.ExitNotRunning, msg+"; start one with `hub stitchslop --origin URL` or `hub start`")
	}
	var b strings.Builder
	b.WriteString("hub stitchslop: several Stitch Slop bridges are running; choose one with --port:")
	for _, s := range scan.Live {
		fmt.Fprintf(&b, "\n  --port %d  (pid %d, origin %s, started %s)", s.Port, s.PID, s.Origin, s.StartedAt.Format(time.RFC3339))
	}
	return sessionFile{}, hub.Exit(hub.ExitUsage, b.String())
}

// do sends one control request and returns the JSON answer.
func (c *shellClient) do(method, path string, body any, timeout time.Duration) ([]byte, error) {
	s, err := c.pickSession()
	if err != nil {
		return nil, err
	}
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	url := fmt.Sprintf("http://%s:%d%s", hub.LoopbackHost, s.Port, path)
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, hub.Exit(hub.ExitFailed, err.Error())
	}
	req.Header.Set(KeyHeader, s.Key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	// The key goes only to a socket of this user's: another user may
	// hold the port the file names (see portowner.Dialer).
	dialer := &portowner.Dialer{Source: "the session file " + sessionPath(c.ConfigDir, s.Port)}
	hc := &http.Client{Timeout: timeout, Transport: dialer.Transport()}
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	if err != nil {
		if re, ok := errors.AsType[*portowner.RefusedError](err); ok {
			if re.Foreign() {
				// our bridge is gone from there: a stale file (§4.4)
				return nil, hub.Exit(hub.ExitNotRunning, "hub stitchslop: "+re.Error())
			}
			return nil, hub.Exit(hub.ExitFailed, "hub stitchslop: "+re.Error())
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, hub.Exit(hub.ExitNotRunning, fmt.Sprintf("stale session file for port %d: nothing is listening (the bridge, pid %d, was probably killed)", s.Port, s.PID))
		}
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			// Connected, then no answer in time: for a call queued behind
			// slow ones, or a slow page, the command may have been sent.
			return nil, hub.Exit(hub.ExitFailed, fmt.Sprintf("the bridge on port %d did not answer within %s; a command may or may not have run: describe the scene before retrying", s.Port, timeout))
		}
		return nil, hub.Exit(hub.ExitFailed, fmt.Sprintf("cannot reach the bridge on port %d: %v", s.Port, err))
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, hub.Exit(hub.ExitFailed, fmt.Sprintf("reading the bridge's answer: %v", err))
	}
	switch resp.StatusCode {
	case http.StatusOK:
		if !json.Valid(out) {
			// A bridge always answers JSON (page envelopes are checked
			// when they arrive); anything else is another process on a
			// stale file's port, and stdout carries JSON only (§4.4).
			return nil, hub.Exit(hub.ExitNotRunning, fmt.Sprintf("the process on port %d is not a bridge that speaks this control plane (it answered something other than JSON)", s.Port))
		}
		return out, nil
	case http.StatusUnauthorized:
		return nil, hub.Exit(hub.ExitNotRunning, fmt.Sprintf("stale session file for port %d: the bridge there rejected its key (another bridge took the port)", s.Port))
	case http.StatusUpgradeRequired:
		return nil, hub.Exit(hub.ExitNotRunning, fmt.Sprintf("the process on port %d is not a bridge that speaks this control plane", s.Port))
	}
	if json.Valid(out) {
		return out, nil // an ok:false envelope; the caller prints it and exits 1
	}
	// A bridge answers every status with JSON; a 404 or 405 page is a web
	// server on a stale file's port, which §4.4 makes exit 3, not 1.
	return nil, hub.Exit(hub.ExitNotRunning, fmt.Sprintf("the process on port %d is not a bridge that speaks this control plane (it answered HTTP %d, not JSON)", s.Port, resp.StatusCode))
}

// emit prints the envelope on stdout and maps ok to the exit code.
func (c *shellClient) emit(envelope []byte) error {
	envelope = bytes.TrimSpace(envelope)
	fmt.Fprintf(c.Stdout, "%s\n", envelope)
	var head struct {
		OK      *bool  `json:"ok"`
		Message string `json:"message"`
	}
	if json.Unmarshal(envelope, &head) != nil || head.OK == nil || !*head.OK {
		if head.Message != "" {
			return hub.Exit(hub.ExitFailed, head.Message)
		}
		return hub.Exit(hub.ExitFailed, "")
	}
	return nil
}

// saveImage implements --out (§4.4): decode dataUrl into file and replace it
// with savedTo/savedBytes/savedType; with no image, say so and write nothing.
func saveImage(envelope []byte, file string, stderr io.Writer) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(envelope, &m); err != nil || m == nil {
		fmt.Fprintf(stderr, "the answer is not a JSON object; nothing written to %s\n", file)
		return envelope, nil
	}
	raw, ok := m["dataUrl"]
	if !ok {
		fmt.Fprintf(stderr, "the answer carries no image (no dataUrl); nothing written to %s\n", file)
		return envelope, nil
	}
	var du string
	json.Unmarshal(raw, &du)
	mime, data, ok := parseDataURL(du)
	if !ok {
		fmt.Fprintf(stderr, "the answer's dataUrl is not data:<mime>;base64,<data>; nothing written to %s\n", file)
		return envelope, nil
	}
	b, _ := base64.StdEncoding.DecodeString(data)
	if err := os.WriteFile(file, b, 0o644); err != nil {
		return nil, hub.Exit(hub.ExitFailed, fmt.Sprintf("writing %s: %v", file, err))
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	delete(m, "dataUrl")
	m["savedTo"], _ = json.Marshal(abs)
	m["savedBytes"], _ = json.Marshal(len(b))
	m["savedType"], _ = json.Marshal(mime)
	fmt.Fprintf(stderr, "saved %d bytes of %s to %s\n", len(b), mime, abs)
	out, _ := json.Marshal(m)
	return out, nil
}
