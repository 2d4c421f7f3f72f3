package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hubdev/hub/hub"
)

// CallRequest is page_tools_call's input.
type CallRequest struct {
	Name     string          `json:"name"`
	Args     json.RawMessage `json:"args,omitempty"`
	NS       string          `json:"ns,omitempty"`
	ClientID string          `json:"clientId,omitempty"`
}

// Candidate describes one match of an ambiguous call.
type Candidate struct {
	ClientID  string `json:"clientId"`
	NS        string `json:"ns"`
	URL       string `json:"url,omitempty"`
	Tab       any    `json:"tab,omitempty"`
	ActiveTab bool   `json:"activeTab,omitempty"`
}

// RouteError is a routing failure: no page, no match, or ambiguity (with
// the candidates so the agent can retry with ns and/or clientId).
type RouteError struct {
	Msg        string      `json:"error"`
	Candidates []Candidate `json:"candidates,omitempty"`
}

func (e *RouteError) Error() string {
	if len(e.Candidates) == 0 {
		return e.Msg
	}
	parts := make([]string, len(e.Candidates))
	for i, c := range e.Candidates {
		s := fmt.Sprintf("clientId=%s ns=%s", c.ClientID, c.NS)
		if c.URL != "" {
			s += " url=" + c.URL
		}
		if c.ActiveTab {
			s += " activeTab"
		}
		parts[i] = s
	}
	return e.Msg + "; candidates: " + strings.Join(parts, "; ")
}

// ToolError is an error the page itself reported, or a timeout/disconnect.
type ToolError struct {
	Msg string
	// Code is empty when the page answered with an error; otherwise the
	// call's fate: OutcomeUnknown (it may have run) or Busy (it was not
	// sent).
	Code string
}

// ToolError codes.
const (
	OutcomeUnknown = "OUTCOME_UNKNOWN"
	Busy           = "BUSY"
)

func (e *ToolError) Error() string { return e.Msg }

// NoPageMsg is the RouteError of a directory with no /tools connection.
const NoPageMsg = "no page is connected to /tools"

// Resolve is the routing of Call without the call: the registration req
// would go to now, or the RouteError Call would answer.
func (d *Directory) Resolve(req CallRequest) (Registration, error) {
	if req.Name == "" {
		return Registration{}, &RouteError{Msg: "page_tools_call needs a tool name"}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	r, err := d.resolveLocked(req)
	if err != nil {
		return Registration{}, err
	}
	return *r, nil
}

// resolveLocked applies the §4.5 routing rules. Caller holds mu.
func (d *Directory) resolveLocked(req CallRequest) (*Registration, error) {
	if len(d.clients) == 0 {
		return nil, &RouteError{Msg: NoPageMsg}
	}
	var matches []Registration
	for _, r := range d.list() {
		if req.NS != "" && r.NS != req.NS || req.ClientID != "" && r.ClientID != req.ClientID {
			continue
		}
		for _, t := range r.Tools {
			if t.Name == req.Name {
				matches = append(matches, r)
				break
			}
		}
	}
	switch len(matches) {
	case 0:
		return nil, &RouteError{Msg: noMatch(req)}
	case 1:
		return &matches[0], nil
	default:
		var act []int
		for i, m := range matches {
			if m.ActiveTab {
				act = append(act, i)
			}
		}
		if len(act) != 1 {
			cands := make([]Candidate, len(matches))
			for i, m := range matches {
				cands[i] = Candidate{ClientID: m.ClientID, NS: m.NS, URL: m.URL, ActiveTab: m.ActiveTab}
				if m.Tab != nil {
					cands[i].Tab = m.Tab
				}
			}
			return nil, &RouteError{Msg: fmt.Sprintf("page tool %q is ambiguous: %d pages hold it; retry with ns and/or clientId", req.Name, len(matches)), Candidates: cands}
		}
		return &matches[act[0]], nil
	}
}

// Call routes a call to the one matching registration and waits for its
// result, the timeout, the page's disconnect, or ctx.
func (d *Directory) Call(ctx context.Context, req CallRequest) (json.RawMessage, error) {
	if req.Name == "" {
		return nil, &RouteError{Msg: "page_tools_call needs a tool name"}
	}
	args := req.Args
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil {
		return nil, &RouteError{Msg: "page_tools_call args must be a JSON object"}
	}
	if !utf8.Valid(args) {
		// encoding/json takes invalid bytes; the page's browser closes a
		// text frame holding them (1007), dropping its tools mid-call
		return nil, &RouteError{Msg: "page_tools_call args must be valid UTF-8"}
	}
	d.mu.Lock()
	target, err := d.resolveLocked(req)
	if err != nil {
		d.mu.Unlock()
		return nil, err
	}
	c := d.clients[target.ClientID]
	if len(c.pending) >= MaxPending {
		d.mu.Unlock()
		return nil, &ToolError{Msg: "too many calls in flight on that page", Code: Busy}
	}
	callID := hub.RandomToken(12)
	ch := make(chan result, 1)
	c.pending[callID] = ch
	d.mu.Unlock()

	forget := func() {
		d.mu.Lock()
		delete(c.pending, callID)
		d.mu.Unlock()
	}
	timeout := d.CallTimeout
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	// The timeout covers handing the call over too: a page that stopped
	// reading its socket blocks the write, not only the answer. The send
	// itself is bounded by the connection's write deadline.
	t := time.NewTimer(timeout)
	defer t.Stop()
	sent := make(chan error, 1)
	d.Guard.Go("page tool call", func() {
		sent <- c.send(map[string]any{"v": 1, "type": "call", "callId": callID, "ns": target.NS, "name": req.Name, "args": args})
	})
	for {
		select {
		case err := <-sent:
			if err != nil {
				forget()
				return nil, &ToolError{Msg: "sending the call to the page failed: " + err.Error(), Code: OutcomeUnknown}
			}
			sent = nil
		case r := <-ch:
			return r.value, r.err
		case <-t.C:
			forget()
			return nil, &ToolError{Msg: fmt.Sprintf("page tool %s/%s did not answer within %s", target.NS, req.Name, timeout), Code: OutcomeUnknown}
		case <-ctx.Done():
			forget()
			return nil, ctx.Err()
		}
	}
}

func noMatch(req CallRequest) string {
	s := fmt.Sprintf("no page tool named %q", req.Name)
	if req.NS != "" {
		s += fmt.Sprintf(" in ns %q", req.NS)
	}
	if req.ClientID != "" {
		s += fmt.Sprintf(" on client %q", req.ClientID)
	}
	return s + " (see page_tools_list)"
}
