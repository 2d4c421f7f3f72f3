package opencode

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/hubdev/hub/hub/portowner"
)

// Connection states, as Status reports them.
const (
	StateReady    = "ready"
	StateNeedAuth = "needs-auth"
	StateOffline  = "offline"
	StateChanged  = "instance-changed"
	StateDisabled = "disabled"
	// StateForeign: another user's process holds the configured port; it
	// is sent nothing.
	StateForeign = "foreign-listener"
	// StateOwnerUnknown: who holds the port cannot be verified, so the
	// credential is not sent.
	StateOwnerUnknown = "owner-unknown"
	// StateNotVerified (the /k listing only): the server asks for a
	// credential and one is configured, but no call has tried it yet; a
	// listing never sends it.
	StateNotVerified = "not-verified"
)

// maxBody bounds what is read from OpenCode per answer.
const maxBody = 8 << 20

// Every exchange with OpenCode is bounded: a server that accepts and never
// answers (stopped, wedged) must not hold a plugin intent running for ever,
// nor the connection lock that every call and /k's status listing take.
// Nothing the plugin asks OpenCode takes long (prompts are admitted
// asynchronously; waits poll), so the bounds are generous.
const (
	probeTimeout   = 5 * time.Second  // /global/health, under the lock
	requestTimeout = 30 * time.Second // any other request
)

// client is the pinned, lazily connected HTTP client of one OpenCode
// origin. Safe for concurrent use.
//
// Every connection it dials is checked before a byte is written: the far
// end must be a socket of this user's (PeerOwner, the kernel's socket
// table), or nothing is sent on it. Requests carrying the credential use
// their own transport (authed), whose connections must pass that check;
// credential-free ones (hc) may also go where this system cannot tell the
// owner (portowner.ErrUnknown), as they always could. Pooled connections
// were checked when dialled and stay with the socket they were checked on.
type client struct {
	origin   string
	host     string
	port     int
	username string
	owner    ProcessOwner
	peer     PeerOwner
	hc       *http.Client // credential-free requests
	authed   *http.Client // requests carrying the Authorization header

	mu    sync.Mutex
	state string // "" until the first probe
	// pin is read by the dialer while connect holds mu, so it is atomic.
	pin         atomic.Pointer[Identity]
	version     string
	authNeeded  bool
	authHeader  string // set once credentials are verified; never logged
	deviceToken string
	bootstrap   string // dropped once pairing succeeded
	paired      bool
	// probeTimeout and requestTimeout (the constants; tests shorten them).
	probeTimeout, requestTimeout time.Duration
}

func newClient(cfg Config, owner ProcessOwner, peer PeerOwner) (*client, error) {
	origin, err := ParseOrigin(cfg.URL)
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(origin)
	port, _ := strconv.Atoi(u.Port())
	if owner == nil {
		owner = procListenerOwner
	}
	if peer == nil {
		peer = portowner.Peer
	}
	c := &client{
		origin: origin, host: u.Hostname(), port: port, username: cfg.Username, owner: owner, peer: peer,
		deviceToken: cfg.DeviceToken, bootstrap: cfg.BootstrapPassword,
		probeTimeout: probeTimeout, requestTimeout: requestTimeout,
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	c.hc = c.httpClient(c.checkedDial(dialer, false))
	c.authed = c.httpClient(c.checkedDial(dialer, true))
	return c, nil
}

func (c *client) httpClient(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:               nil, // loopback only: never via a proxy
			DialContext:         dial,
			MaxIdleConnsPerHost: 8,
			IdleConnTimeout:     30 * time.Second,
			ForceAttemptHTTP2:   false,
		},
		// A redirect could carry the Basic header elsewhere; OpenCode's API
		// never redirects.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// closeIdle drops every pooled connection, so the next request dials (and
// checks) a new one.
func (c *client) closeIdle() {
	c.hc.CloseIdleConnections()
	c.authed.CloseIdleConnections()
}

// ErrForeignListener is the refusal to talk to a port another user's
// process holds: whatever it is, it is not this user's OpenCode, and it
// would read the credential and every prompt.
var ErrForeignListener = errors.New("another user's process holds the OpenCode port")

// ErrOwnerUnknown is the refusal of a connection whose far end's owner
// cannot be verified: always for a request carrying the credential, and
// for any request where the socket table can be read but does not show it.
var ErrOwnerUnknown = errors.New("cannot verify that the OpenCode port is held by this user, so nothing is sent to it")

// checkedDial dials, then checks the connection before any byte is
// written to it: the far end must be this user's socket (for a
// credential-free transport, unless this system cannot say), and the
// process a "process" pin names.
func (c *client) checkedDial(d *net.Dialer, credentialed bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if err := c.checkPeer(ctx, conn, credentialed); err != nil {
			conn.Close()
			return nil, err
		}
		if id := c.pin.Load(); id != nil && id.Kind == "process" {
			pid, start, err := c.owner(c.host, c.port)
			if err != nil || processValue(pid, start) != id.Value {
				conn.Close()
				return nil, ErrInstanceChanged
			}
		}
		return conn, nil
	}
}

// checkPeer verifies who holds the far end of conn: the socket table's
// owner of the very connection, so no other process can slip in between
// the check and the write.
func (c *client) checkPeer(ctx context.Context, conn net.Conn, credentialed bool) error {
	o, err := c.peer(ctx, conn)
	switch {
	case err == nil && o.Mine():
		return nil
	case err == nil:
		return fmt.Errorf("%w: %s is held by %s", ErrForeignListener, conn.RemoteAddr(), portowner.Resolve(o))
	case errors.Is(err, portowner.ErrUnknown) && !credentialed:
		return nil // nothing secret rides on it; this system cannot say more
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return fmt.Errorf("%w (%s: %w)", ErrOwnerUnknown, conn.RemoteAddr(), err)
}

// connect probes and pins on first use, and re-probes while offline or
// short of credentials. A changed instance stays failed: the plugin never
// re-pins by itself.
func (c *client) connect(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.state {
	case StateReady:
		return nil
	case StateChanged:
		return ErrInstanceChanged
	}
	pinned := c.pin.Load() != nil
	var before string
	if !pinned {
		if pid, start, err := c.owner(c.host, c.port); err == nil {
			before = processValue(pid, start)
		}
	}
	// The probe carries no credential: it learns whether the server wants
	// one and who it is before the secret is offered.
	pctx, cancel := context.WithTimeout(ctx, c.probeTimeout)
	defer cancel()
	resp, body, err := c.raw(pctx, http.MethodGet, "/global/health", nil, "", "")
	if err != nil {
		c.state = failedState(err)
		return err
	}
	if !pinned {
		id := Identity{Kind: "none"}
		if v := serverInstance(resp.Header, body); v != "" {
			id = Identity{Kind: "server", Value: v}
		} else if before != "" {
			pid, start, err := c.owner(c.host, c.port)
			if err != nil || processValue(pid, start) != before {
				// The port changed hands during the probe.
				c.state = StateChanged
				return ErrInstanceChanged
			}
			id = Identity{Kind: "process", Value: before}
		}
		c.pin.Store(&id)
	} else if err := c.pin.Load().checkResponse(resp); err != nil {
		c.state = StateChanged
		return err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		var h struct {
			Version string `json:"version"`
		}
		_ = json.Unmarshal(body, &h)
		c.version = h.Version
		c.authNeeded = false
		c.state = StateReady
		return nil
	case http.StatusUnauthorized:
		c.authNeeded = true
	default:
		c.state = StateOffline
		return fmt.Errorf("opencode health probe answered HTTP %d", resp.StatusCode)
	}
	return c.authenticate(pctx)
}

// authenticate tries the configured credential on an authenticated route.
// Called with mu held.
func (c *client) authenticate(ctx context.Context) error {
	secret, bootstrap := c.deviceToken, false
	if secret == "" && c.bootstrap != "" {
		secret, bootstrap = c.bootstrap, true
	}
	if secret == "" {
		c.state = StateNeedAuth
		return errNeedsAuth
	}
	header := "Basic " + base64.StdEncoding.EncodeToString([]byte(c.username+":"+secret))
	resp, body, err := c.raw(ctx, http.MethodGet, "/global/health", nil, "", header)
	if err != nil {
		c.state = failedState(err)
		return err
	}
	if err := c.pin.Load().checkResponse(resp); err != nil {
		c.state = StateChanged
		return err
	}
	if resp.StatusCode != http.StatusOK {
		c.state = StateNeedAuth
		return errNeedsAuth
	}
	var h struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(body, &h)
	c.version = h.Version
	c.authHeader = header
	if bootstrap {
		// OpenCode has nothing to exchange the password for, so the Basic
		// header it verified is what stays; the plain copy goes.
		c.bootstrap = ""
		c.paired = true
	}
	c.state = StateReady
	return nil
}

var errNeedsAuth = errors.New("opencode requires authentication and no valid device token or bootstrap password is configured")

// failedState is the connection state after a request failed with err.
func failedState(err error) string {
	switch {
	case errors.Is(err, ErrInstanceChanged):
		return StateChanged
	case errors.Is(err, ErrForeignListener):
		return StateForeign
	case errors.Is(err, ErrOwnerUnknown):
		return StateOwnerUnknown
	}
	return StateOffline
}

// raw sends one request. expect and auth are the pin and credential
// headers (empty: none).
func (c *client) raw(ctx context.Context, method, path string, body []byte, expect, auth string) (*http.Response, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	ctx, cancel := context.WithTimeout(ctx, c.requestTimeout)
	defer cancel() // after the body is read
	req, err := http.NewRequestWithContext(ctx, method, c.origin+path, rd)
	if err != nil {
		return nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if expect != "" {
		req.Header.Set(HeaderExpectInstance, expect)
	}
	hc := c.hc
	if auth != "" {
		req.Header.Set("Authorization", auth)
		hc = c.authed // only to a connection verified as this user's
	}
	resp, err := hc.Do(req)
	if err != nil {
		if errors.Is(err, ErrInstanceChanged) {
			return nil, nil, ErrInstanceChanged
		}
		if errors.Is(err, ErrForeignListener) || errors.Is(err, ErrOwnerUnknown) {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return nil, nil, err
		}
		// url.Error names the URL, which holds no secret; keep only the
		// cause's text to stay short.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, nil, fmt.Errorf("opencode unreachable: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, nil, fmt.Errorf("opencode answer cut short: %w", err)
	}
	if len(b) > maxBody {
		return nil, nil, fmt.Errorf("opencode answer exceeds %d bytes", maxBody)
	}
	return resp, b, nil
}

// apiError is a non-2xx answer from OpenCode.
type apiError struct {
	Status  int
	Name    string
	Message string
}

func (e *apiError) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("opencode HTTP %d %s: %s", e.Status, e.Name, e.Message)
	}
	return fmt.Sprintf("opencode HTTP %d %s", e.Status, e.Name)
}

// do runs an authenticated, pinned request: path may carry a query; in
// is marshalled as the JSON body when not nil; out receives the answer.
func (c *client) do(ctx context.Context, method, path string, in, out any) error {
	if err := c.connect(ctx); err != nil {
		return err
	}
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	c.mu.Lock()
	auth := c.authHeader
	c.mu.Unlock()
	id := *c.pin.Load()
	resp, b, err := c.raw(ctx, method, path, body, id.Value, auth)
	if err != nil {
		c.fail(failedState(err))
		return err
	}
	if err := id.checkResponse(resp); err != nil {
		c.fail(StateChanged)
		return err
	}
	if resp.StatusCode == http.StatusUnauthorized {
		c.fail(StateNeedAuth)
		return errNeedsAuth
	}
	if resp.StatusCode/100 != 2 {
		return decodeAPIError(resp.StatusCode, b)
	}
	if out == nil || len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("opencode answer for %s %s: %w", method, pathOnly(path), err)
	}
	return nil
}

func (c *client) fail(state string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != StateChanged {
		c.state = state
	}
}

func decodeAPIError(status int, b []byte) error {
	var e struct {
		Name    string `json:"name"`
		Tag     string `json:"_tag"`
		Message string `json:"message"`
		Data    struct {
			Message string `json:"message"`
		} `json:"data"`
	}
	_ = json.Unmarshal(b, &e)
	out := &apiError{Status: status, Name: e.Name, Message: e.Data.Message}
	if out.Name == "" {
		out.Name = e.Tag
	}
	if out.Message == "" {
		out.Message = e.Message
	}
	// Whatever serves the port chose these (up to maxBody); the agent
	// gets a short detail, cut between characters.
	out.Name, out.Message = clipText(out.Name, 100), clipText(out.Message, 300)
	return out
}

// clipText cuts s to at most n bytes at a character boundary.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func pathOnly(p string) string {
	if i := bytes.IndexByte([]byte(p), '?'); i >= 0 {
		return p[:i]
	}
	return p
}

// listingState is the state /k's plugin listing shows. It never sends the
// credential: every session may list plugins, read-only ones too, and a
// listing must not be what hands the secret to whatever holds the port.
// After a call has connected it is that call's state; before, a
// credential-free probe tells offline, foreign-listener, owner-unknown,
// ready (no credential needed), needs-auth (one is needed, none is
// configured) or not-verified (one is configured and untried: the first
// call tries it). The probe changes nothing: it pins nothing.
func (c *client) listingState(ctx context.Context) string {
	c.mu.Lock()
	st := c.state
	hasSecret := c.deviceToken != "" || c.bootstrap != ""
	c.mu.Unlock()
	switch st {
	case StateReady, StateChanged, StateNeedAuth:
		return st
	}
	ctx, cancel := context.WithTimeout(ctx, c.probeTimeout)
	defer cancel()
	resp, _, err := c.raw(ctx, http.MethodGet, "/global/health", nil, "", "")
	if err != nil {
		return failedState(err)
	}
	if id := c.pin.Load(); id != nil && id.checkResponse(resp) != nil {
		return StateChanged
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		return StateReady
	case resp.StatusCode == http.StatusUnauthorized && hasSecret:
		return StateNotVerified
	case resp.StatusCode == http.StatusUnauthorized:
		return StateNeedAuth
	}
	return StateOffline
}

// snapshot is the client's state for status answers.
type snapshot struct {
	State    string
	Identity Identity
	Version  string
	Auth     bool
	Paired   bool
}

func (c *client) snapshot() snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	var id Identity
	if p := c.pin.Load(); p != nil {
		id = *p
	}
	return snapshot{State: c.state, Identity: id, Version: c.version, Auth: c.authNeeded, Paired: c.paired}
}

// query builds "path?k=v&..." skipping empty values.
func query(path string, kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			v.Set(kv[i], kv[i+1])
		}
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}
