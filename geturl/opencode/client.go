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
)

// Connection states, as Status reports them.
const (
	StateReady    = "ready"
	StateNeedAuth = "needs-auth"
	StateOffline  = "offline"
	StateChanged  = "instance-changed"
	StateDisabled = "disabled"
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
type client struct {
	origin   string
	host     string
	port     int
	username string
	owner    ProcessOwner
	hc       *http.Client

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

func newClient(cfg Config, owner ProcessOwner) (*client, error) {
	origin, err := ParseOrigin(cfg.URL)
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(origin)
	port, _ := strconv.Atoi(u.Port())
	if owner == nil {
		owner = procListenerOwner
	}
	c := &client{
		origin: origin, host: u.Hostname(), port: port, username: cfg.Username, owner: owner,
		deviceToken: cfg.DeviceToken, bootstrap: cfg.BootstrapPassword,
		probeTimeout: probeTimeout, requestTimeout: requestTimeout,
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{
		Proxy:               nil, // loopback only: never via a proxy
		DialContext:         c.pinnedDial(dialer),
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     30 * time.Second,
		ForceAttemptHTTP2:   false,
	}
	c.hc = &http.Client{
		Transport: tr,
		// A redirect could carry the Basic header elsewhere; OpenCode's API
		// never redirects.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c, nil
}

// pinnedDial checks every new connection against a "process" pin before
// any byte (so no credential) is written to it.
func (c *client) pinnedDial(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
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
		if errors.Is(err, ErrInstanceChanged) {
			c.state = StateChanged
			return err
		}
		c.state = StateOffline
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
		if errors.Is(err, ErrInstanceChanged) {
			c.state = StateChanged
		} else {
			c.state = StateOffline
		}
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
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if errors.Is(err, ErrInstanceChanged) {
			return nil, nil, ErrInstanceChanged
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
		if errors.Is(err, ErrInstanceChanged) {
			c.fail(StateChanged)
		} else {
			c.fail(StateOffline)
		}
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
