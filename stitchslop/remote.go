package stitchslop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/portowner"
)

// ErrBridgeGone means the bridge a Remote drives no longer answers with
// its key: its process ended, or another bridge holds the port now.
var ErrBridgeGone = errors.New("the Stitch Slop bridge is gone")

// errKeyRefused is wrapped by the ErrBridgeGone of a request the port
// refused for its key, so it never reached a handler.
var errKeyRefused = errors.New("refused its key")

// unsent reports whether a failed request is known not to have reached
// the bridge's handler: it could not connect, its connection was refused
// before a byte went (another user holds the port), or its key was
// refused.
func unsent(err error) bool {
	var op *net.OpError
	return errors.Is(err, errKeyRefused) || errors.Is(err, portowner.ErrRefused) || errors.As(err, &op) && op.Op == "dial"
}

// Remote drives a bridge that another process runs (the hub's adapter, or
// a standalone bridge) over its keyed control plane (§4). Calls reuse
// keep-alive connections and prepared request parts: a face sends many.
// The key goes only to a socket of this user's: each new connection is
// checked before a byte is written (portowner.Dialer), so a port its
// session file names but another user holds is refused, naming the holder.
type Remote struct {
	Port   int
	Origin string
	PID    int

	dir     string // the config dir its session file is in
	key     string
	base    string
	tr      *http.Transport // bounded requests, sent straight (see do)
	stream  *http.Client    // GET /events: no overall timeout
	urls    map[string]*url.URL
	hdr     http.Header // the key
	hdrJSON http.Header // the key and a JSON body's type
}

// remotePaths are the bounded requests' paths, parsed once.
var remotePaths = []string{"/status", "/tools", "/call", "/wait", "/pair"}

// remoteTimeout bounds a request until its answer starts: a call may take
// the page's whole CallTimeout (calls go side by side: none waits for
// another's turn).
const remoteTimeout = DefaultCallTimeout + 30*time.Second

// verifyTimeout bounds the GET /status that proves a bridge is live.
const verifyTimeout = 3 * time.Second

// OpenRemote connects to the bridge whose session file for port is in
// configDir, after checking that its pid is alive and that its control
// plane answers with the file's key.
func OpenRemote(ctx context.Context, configDir string, port int) (*Remote, error) {
	sf, err := readSession(sessionPath(configDir, port))
	if err != nil {
		return nil, fmt.Errorf("%w: no session file for port %d (%v)", ErrBridgeGone, port, err)
	}
	return verifyRemote(ctx, configDir, sf)
}

// FindRemote finds a live bridge in configDir serving origin (and on port,
// when port is not 0). Of several, the one with a tab attached is chosen
// (that is the tab an agent means), then the lowest port (the one a tab
// tries first). It returns ErrBridgeGone when none qualifies.
func FindRemote(ctx context.Context, configDir, origin string, port int) (*Remote, error) {
	var fallback *Remote
	for _, sf := range scanSessions(configDir).Live {
		if (port != 0 && sf.Port != port) || sf.Origin != origin {
			continue
		}
		r, err := verifyRemote(ctx, configDir, sf)
		if err != nil {
			continue
		}
		st, err := r.Status(ctx)
		if err != nil {
			r.Close()
			continue
		}
		if st.Connected {
			if fallback != nil {
				fallback.Close()
			}
			return r, nil
		}
		if fallback == nil {
			fallback = r
		} else {
			r.Close()
		}
	}
	if fallback != nil {
		return fallback, nil
	}
	return nil, fmt.Errorf("%w: no live bridge for %s in %s", ErrBridgeGone, origin, configDir)
}

func verifyRemote(ctx context.Context, dir string, sf sessionFile) (*Remote, error) {
	if !hub.PIDAlive(sf.PID) {
		return nil, fmt.Errorf("%w: pid %d of port %d has exited", ErrBridgeGone, sf.PID, sf.Port)
	}
	r := newRemote(dir, sf)
	vctx, cancel := context.WithTimeout(ctx, verifyTimeout)
	defer cancel()
	st, err := r.Status(vctx)
	if err != nil {
		r.Close()
		return nil, err
	}
	if st.Origin != sf.Origin {
		r.Close()
		return nil, fmt.Errorf("%w: port %d serves %s, not %s", ErrBridgeGone, sf.Port, st.Origin, sf.Origin)
	}
	return r, nil
}

// newRemote drives the bridge of sf, the session file in dir.
func newRemote(dir string, sf sessionFile) *Remote {
	r := &Remote{
		Port: sf.Port, Origin: sf.Origin, PID: sf.PID, key: sf.Key, dir: dir,
		base: "http://" + hub.LoopbackHost + ":" + strconv.Itoa(sf.Port),
		urls: map[string]*url.URL{},
	}
	dialer := &portowner.Dialer{Source: "the session file " + sessionPath(dir, sf.Port)}
	r.tr = dialer.Transport()
	r.tr.ResponseHeaderTimeout = remoteTimeout
	r.stream = &http.Client{Transport: dialer.Transport()}
	for _, p := range remotePaths {
		r.urls[p] = &url.URL{Scheme: "http", Host: hub.LoopbackHost + ":" + strconv.Itoa(sf.Port), Path: p}
	}
	key := http.CanonicalHeaderKey(KeyHeader)
	r.hdr = http.Header{key: {sf.Key}}
	r.hdrJSON = http.Header{key: {sf.Key}, "Content-Type": {"application/json"}}
	return r
}

// setAgent names the agent r's requests are made for (AgentHeader), so
// the bridge reports who drives its tab. Call it before r is shared.
func (r *Remote) setAgent(id string) {
	key := http.CanonicalHeaderKey(KeyHeader)
	agent := http.CanonicalHeaderKey(AgentHeader)
	r.hdr = http.Header{key: {r.key}, agent: {id}}
	r.hdrJSON = http.Header{key: {r.key}, agent: {id}, "Content-Type": {"application/json"}}
}

// Close drops the idle keep-alive connections.
func (r *Remote) Close() {
	r.tr.CloseIdleConnections()
	r.stream.CloseIdleConnections()
}

// do sends one keyed control request and returns the 200 answer's body.
// A bounded request (hc nil) goes straight to the transport, built from
// parts made once: an http.Client would add a deadline context and timer,
// a header copy for redirects and a URL parse to every call a face makes
// (the bridge never redirects), and the transport bounds the wait for the
// answer itself (remoteTimeout).
func (r *Remote) do(ctx context.Context, hc *http.Client, method, path string, body []byte) (*http.Response, error) {
	var (
		req *http.Request
		err error
	)
	if u := r.urls[path]; hc == nil && u != nil {
		req = r.request(ctx, method, u, body)
	} else {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		if req, err = http.NewRequestWithContext(ctx, method, r.base+path, rd); err != nil {
			return nil, err
		}
		req.Header = r.hdr.Clone()
		if body != nil {
			req.Header["Content-Type"] = []string{"application/json"}
		}
	}
	var resp *http.Response
	if hc == nil {
		resp, err = r.tr.RoundTrip(req)
	} else {
		resp, err = hc.Do(req)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if re, ok := errors.AsType[*portowner.RefusedError](err); ok {
			return nil, fmt.Errorf("%w: %w", ErrBridgeGone, re) // it names the port and its holder
		}
		return nil, fmt.Errorf("%w: port %d does not answer (%w)", ErrBridgeGone, r.Port, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return resp, nil
	case http.StatusUnauthorized, http.StatusUpgradeRequired:
		resp.Body.Close()
		return nil, fmt.Errorf("%w: port %d %w (another process holds it now)", ErrBridgeGone, r.Port, errKeyRefused)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &e) == nil && e.Message != "" {
		return nil, errors.New(e.Message)
	}
	return nil, fmt.Errorf("the bridge on port %d answered HTTP %d", r.Port, resp.StatusCode)
}

// request is a bounded request to u. Its URL and headers are shared by
// every request of r: the transport only reads them.
func (r *Remote) request(ctx context.Context, method string, u *url.URL, body []byte) *http.Request {
	req := &http.Request{Method: method, URL: u, Host: u.Host, Header: r.hdr,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	if body != nil {
		req.Header = r.hdrJSON
		req.ContentLength = int64(len(body))
		req.Body = io.NopCloser(bytes.NewReader(body))
		// The transport resends a request a closed keep-alive connection
		// lost, with a body it can get again.
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	return req.WithContext(ctx)
}

// maxAnswer bounds a control-plane answer.
const maxAnswer = 256 << 20

// get does a bounded request and reads the whole answer.
func (r *Remote) get(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	resp, err := r.do(ctx, nil, method, path, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if n := resp.ContentLength; n >= 0 && n <= maxAnswer {
		// The usual answer says its length: one buffer of that size.
		b := make([]byte, n)
		_, err := io.ReadFull(resp.Body, b)
		return b, err
	}
	return io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
}

// Status is GET /status.
func (r *Remote) Status(ctx context.Context) (StatusReport, error) {
	var st StatusReport
	b, err := r.get(ctx, http.MethodGet, "/status", nil)
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	return st, err
}

// Tools is GET /tools: the tab's tools, or ErrNoPage when no tab is
// attached.
func (r *Remote) Tools(ctx context.Context) ([]PageTool, error) {
	b, err := r.get(ctx, http.MethodGet, "/tools", nil)
	if err != nil {
		return nil, err
	}
	var out struct {
		OK    bool       `json:"ok"`
		Error string     `json:"error"`
		Tools []PageTool `json:"tools"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("the bridge on port %d answered GET /tools with something that is not its tool list", r.Port)
	}
	if !out.OK {
		return nil, ErrNoPage
	}
	return out.Tools, nil
}

// noPageMark is in every no_page answer; a page's own envelope that
// happens to contain it carries an id as well.
var noPageMark = []byte(`"no_page"`)

// Call is POST /call: the tab's envelope verbatim, or ErrNoPage when no tab
// is attached.
func (r *Remote) Call(ctx context.Context, command string, args json.RawMessage) ([]byte, error) {
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	cmd, err := json.Marshal(command)
	if err != nil {
		return nil, err
	}
	body := make([]byte, 0, len(cmd)+len(args)+24)
	body = append(body, `{"command":`...)
	body = append(body, cmd...)
	body = append(body, `,"args":`...)
	body = append(body, args...)
	body = append(body, '}')
	out, err := r.get(ctx, http.MethodPost, "/call", body)
	if err != nil {
		return nil, err
	}
	if bytes.Contains(out, noPageMark) {
		var e struct {
			ID    json.RawMessage `json:"id"`
			Error string          `json:"error"`
		}
		if json.Unmarshal(out, &e) == nil && e.ID == nil && e.Error == "no_page" {
			return nil, ErrNoPage
		}
	}
	return bytes.TrimSuffix(out, []byte{'\n'}), nil
}

// Wait is POST /wait: whether a tab attached within d.
func (r *Remote) Wait(ctx context.Context, d time.Duration) (bool, error) {
	body, _ := json.Marshal(map[string]float64{"seconds": d.Seconds()})
	b, err := r.get(ctx, http.MethodPost, "/wait", body)
	if err != nil {
		return false, err
	}
	var v struct {
		Connected bool `json:"connected"`
	}
	return v.Connected, json.Unmarshal(b, &v)
}

// Pair is POST /pair: arm a one-time token on the bridge, for its site.
func (r *Remote) Pair(ctx context.Context, token string) error {
	return r.PairSite(ctx, "", token)
}

// PairSite is POST /pair for site (the bridge's own when ""): a page of
// that site may then pair once, if the bridge admits it (a production or
// loopback site).
func (r *Remote) PairSite(ctx context.Context, site, token string) error {
	req := map[string]string{"token": token}
	if site != "" {
		req["origin"] = site
	}
	body, _ := json.Marshal(req)
	b, err := r.get(ctx, http.MethodPost, "/pair", body)
	if err != nil {
		return err
	}
	var v struct {
		OK      bool   `json:"ok"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if !v.OK {
		return errors.New(v.Message)
	}
	return nil
}

// Events attaches to GET /events as face and calls fn with every tools
// event until ctx ends (ctx.Err()) or the stream does: nil when the bridge
// ended it (it is stopping), an error when the connection failed.
func (r *Remote) Events(ctx context.Context, face string, fn func(ToolsEvent)) error {
	resp, err := r.do(ctx, r.stream, http.MethodGet, "/events?face="+url.QueryEscape(face), nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 2*maxToolList+64<<10)
	for sc.Scan() {
		var ev ToolsEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Type != "tools" {
			continue
		}
		fn(ev)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: the event stream of port %d broke (%v)", ErrBridgeGone, r.Port, err)
	}
	return nil
}
