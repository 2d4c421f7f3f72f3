package pixelle

import (
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
	"strings"
	"time"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/portowner"
)

// DefaultRelay is the canonical RELAY.
const DefaultRelay = "http://127.0.0.1:4317"

// ClientTimeout is the agent client's overall limit for one command; it is
// later than the relay's 12 s so the relay's OUTCOME_UNKNOWN arrives first.
const ClientTimeout = 18 * time.Second

// ClientError is a client-side failure: printed as {"code","message"} on
// stdout, with an exit code.
type ClientError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Exit    int    `json:"-"`
}

func (e *ClientError) Error() string { return e.Message }

// ExitCode is the process exit code the error ends the command with.
func (e *ClientError) ExitCode() int { return e.Exit }

func usageErr(code, format string, a ...any) *ClientError {
	return &ClientError{Code: code, Message: fmt.Sprintf(format, a...), Exit: hub.ExitUsage}
}

func failErr(code, format string, a ...any) *ClientError {
	return &ClientError{Code: code, Message: fmt.Sprintf(format, a...), Exit: hub.ExitFailed}
}

func unreachableErr(relay string, err error) *ClientError {
	return &ClientError{Code: "RELAY_UNREACHABLE", Exit: hub.ExitNotRunning,
		Message: fmt.Sprintf("no relay answers at %s (%v); start one with `hub pixelle serve --website ORIGIN` or check the port", relay, causeText(err))}
}

// dialErr is a failure to reach the relay: refused before a byte was sent
// because another user holds its port (exit 3, as a relay that is not
// there: ours is gone from it), or because who holds it cannot be
// verified (exit 1); else unreachable.
func dialErr(relay string, err error) *ClientError {
	re, ok := errors.AsType[*portowner.RefusedError](err)
	switch {
	case ok && re.Foreign():
		return &ClientError{Code: "RELAY_NOT_YOURS", Exit: hub.ExitNotRunning, Message: re.Error()}
	case ok:
		return &ClientError{Code: "RELAY_UNVERIFIED", Exit: hub.ExitFailed, Message: re.Error()}
	}
	return unreachableErr(relay, err)
}

func causeText(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	return err.Error()
}

// ParseRelayURL checks that s is a loopback relay URL and returns its
// canonical form http://127.0.0.1:PORT. "localhost" is accepted and
// rewritten, because the relay only answers Host 127.0.0.1:PORT.
func ParseRelayURL(s string) (string, error) {
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(s), "/"))
	if err != nil || u.Host == "" {
		return "", usageErr("INVALID_RELAY", "relay must be a URL like %s, got %q", DefaultRelay, s)
	}
	if u.Scheme != "http" && u.Scheme != "ws" {
		return "", usageErr("INVALID_RELAY", "relay must be an http:// loopback URL, got %q", s)
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", usageErr("INVALID_RELAY", "relay must be just scheme, host and port, got %q", s)
	}
	host := strings.ToLower(u.Hostname())
	if host != "127.0.0.1" && host != "localhost" {
		return "", usageErr("INVALID_RELAY", "relay must be a loopback URL on 127.0.0.1, got %q", s)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil || port < 1 || port > 65535 {
		return "", usageErr("INVALID_RELAY", "relay must name its port, e.g. %s, got %q", DefaultRelay, s)
	}
	return "http://" + hub.LoopbackHost + ":" + strconv.Itoa(port), nil
}

// Client is the native agent side of pixelle-relay/0.2.
//
// What carries a credential (a pairing code to POST /api/pair, the agent
// token in the WebSocket hello) goes only to a socket of this user's:
// each of those connections is checked before a byte is written
// (portowner.Dialer), so a relay port another user holds is refused,
// naming the holder. /health carries none and is not checked.
type Client struct {
	Relay   string        // canonical relay URL (see ParseRelayURL)
	Timeout time.Duration // per command; default ClientTimeout
}

func (c *Client) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return ClientTimeout
}

// dialer checks, before a credential goes, that the relay's port is held
// by this user.
func (c *Client) dialer() *portowner.Dialer {
	return &portowner.Dialer{Source: "the relay address " + c.Relay}
}

// httpClient is a client for one request; a credentialed one dials
// through c.dialer(). The caller closes its idle connections.
func (c *Client) httpClient(credentialed bool) *http.Client {
	hc := &http.Client{
		Timeout: 10 * time.Second,
		// A relay never redirects; following one could carry a code elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	if credentialed {
		hc.Transport = c.dialer().Transport()
	}
	return hc
}

// HealthReport is what `hub pixelle health` prints.
type HealthReport struct {
	OK            bool   `json:"ok"`
	Relay         string `json:"relay"`
	Version       string `json:"version,omitempty"`
	Compatible    bool   `json:"compatible"`
	Website       string `json:"website,omitempty"`
	OriginAllowed *bool  `json:"originAllowed,omitempty"`
	Message       string `json:"message,omitempty"`
}

// Health checks /health with Origin: website (when given): the relay is
// reusable when it speaks version 0.2.0 and permits that origin.
func (c *Client) Health(ctx context.Context, website string) (HealthReport, error) {
	rep, err := c.health(ctx, website)
	if err == nil && rep.Website != "" && rep.OriginAllowed != nil && !*rep.OriginAllowed && rep.Version == "" {
		// A relay refuses an origin it does not allow before saying its
		// version; ask as a native client (no Origin) so Compatible and
		// Version describe the relay, not the refusal.
		if native, nerr := c.health(ctx, ""); nerr == nil {
			rep.Version, rep.Compatible = native.Version, native.Compatible
		}
	}
	return rep, err
}

func (c *Client) health(ctx context.Context, website string) (HealthReport, error) {
	rep := HealthReport{Relay: c.Relay}
	if website != "" {
		w, ok := hub.NormalizeOrigin(website)
		if !ok || !strings.Contains(website, "://") {
			return rep, usageErr("INVALID_WEBSITE", "website must be an exact origin like https://pixelle.example, got %q", website)
		}
		rep.Website = w
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Relay+"/health", nil)
	if err != nil {
		return rep, usageErr("INVALID_RELAY", "%v", err)
	}
	if website != "" {
		req.Header.Set("Origin", rep.Website)
	}
	resp, err := c.httpClient(false).Do(req)
	if err != nil {
		return rep, unreachableErr(c.Relay, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var v struct {
		OK      bool   `json:"ok"`
		Version string `json:"version"`
	}
	if resp.StatusCode == http.StatusOK && json.Unmarshal(body, &v) == nil {
		rep.Version = v.Version
		rep.Compatible = v.OK && v.Version == ProtocolVersion
	}
	if website != "" {
		allowed := resp.StatusCode == http.StatusOK && resp.Header.Get("Access-Control-Allow-Origin") == rep.Website
		rep.OriginAllowed = &allowed
	}
	rep.OK = rep.Compatible && (rep.OriginAllowed == nil || *rep.OriginAllowed)
	switch {
	case rep.OK:
		rep.Message = "compatible relay; reuse it"
	case resp.StatusCode == http.StatusForbidden:
		rep.Message = "something answers on this port but refuses this origin (or this Host); do not stop it — choose another port"
	case !rep.Compatible:
		rep.Message = fmt.Sprintf("not a compatible pixelle-relay (HTTP %d, version %q); do not stop it — choose another port", resp.StatusCode, rep.Version)
	default:
		rep.Message = "the relay does not permit this website origin; do not stop it — choose another port"
	}
	return rep, nil
}

// Credentials are what POST /api/pair returns; stored privately.
type Credentials struct {
	SessionID string `json:"sessionId"`
	Token     string `json:"token"`
	URL       string `json:"url"`
}

// Pair exchanges a pairing code for agent credentials.
func (c *Client) Pair(ctx context.Context, code string) (Credentials, error) {
	norm, ok := normalizeCode(code)
	if !ok {
		return Credentials{}, usageErr("INVALID_CODE", "a pairing code is 12 hexadecimal characters, as shown in Pixelle")
	}
	body, _ := json.Marshal(map[string]string{"code": norm})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Relay+"/api/pair", bytes.NewReader(body))
	if err != nil {
		return Credentials{}, usageErr("INVALID_RELAY", "%v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	hc := c.httpClient(true)
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	if err != nil {
		return Credentials{}, dialErr(c.Relay, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusBadRequest:
		return Credentials{}, failErr("INVALID_OR_EXPIRED_CODE", "the relay refused the code: it is wrong, used, expired, or its Pixelle tab is not connected; click Connect locally again for a fresh code")
	case http.StatusTooManyRequests:
		return Credentials{}, failErr("RATE_LIMITED", "too many pairing attempts; wait a minute and try once with the current code")
	default:
		return Credentials{}, failErr("PAIR_FAILED", "the relay answered HTTP %d", resp.StatusCode)
	}
	var cr Credentials
	if err := json.Unmarshal(raw, &cr); err != nil || cr.SessionID == "" || cr.Token == "" {
		return Credentials{}, failErr("PAIR_FAILED", "the relay's pairing answer is not valid")
	}
	// Keep the URL the relay names only if it is loopback; else the one used.
	if u, err := ParseRelayURL(cr.URL); err == nil {
		cr.URL = u
	} else {
		cr.URL = c.Relay
	}
	return cr, nil
}

// Outcome is a command's answer: exactly one of Result and Error, copied
// unchanged from the relay.
type Outcome struct {
	Result json.RawMessage
	Error  json.RawMessage
}

// ErrorCode returns the code of an error outcome ("" for success).
func (o Outcome) ErrorCode() string {
	var e struct {
		Code string `json:"code"`
	}
	if o.Error != nil {
		_ = json.Unmarshal(o.Error, &e)
	}
	return e.Code
}

// Call sends one validated command over a fresh authenticated WebSocket and
// waits for the result carrying its own request id.
func (c *Client) Call(ctx context.Context, cr Credentials, command json.RawMessage) (Outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	ws, err := dialRelay(ctx, c.Relay, c.dialer())
	if err != nil {
		return Outcome{}, err
	}
	defer ws.close()
	hello, _ := json.Marshal(map[string]string{"type": "hello", "role": "agent", "sessionId": cr.SessionID, "token": cr.Token})
	if err := ws.send(hello); err != nil {
		return Outcome{}, unreachableErr(c.Relay, err)
	}
	var ready struct {
		Type string `json:"type"`
		Role string `json:"role"`
	}
	for ready.Type != "ready" {
		msg, err := ws.next(ctx)
		if err != nil {
			return Outcome{}, ws.authError(err)
		}
		_ = json.Unmarshal(msg, &ready)
	}
	id := "cli-" + hub.RandomHex(8)
	frame := make([]byte, 0, len(command)+64)
	frame = append(frame, `{"type":"command","id":"`+id+`","command":`...)
	frame = append(frame, command...)
	frame = append(frame, '}')
	if err := ws.send(frame); err != nil {
		return Outcome{}, outcomeUnknown("the connection failed while sending")
	}
	for {
		msg, err := ws.next(ctx)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return Outcome{}, outcomeUnknown(fmt.Sprintf("no result within %s", c.timeout()))
			}
			return Outcome{}, outcomeUnknown("the relay closed the connection before answering")
		}
		var res struct {
			Type   string          `json:"type"`
			ID     string          `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(msg, &res) != nil || res.Type != "result" || res.ID != id {
			continue
		}
		return Outcome{Result: res.Result, Error: res.Error}, nil
	}
}

// outcomeUnknown is the client's own OUTCOME_UNKNOWN: the command may have
// been applied.
func outcomeUnknown(why string) *ClientError {
	return failErr("OUTCOME_UNKNOWN", "%s; the command may have been applied: read state, or retry with the same operationId", why)
}
