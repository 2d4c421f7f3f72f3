package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

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
type ToolError struct{ Msg string }

func (e *ToolError) Error() string { return e.Msg }

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
	d.mu.Lock()
	if len(d.clients) == 0 {
		d.mu.Unlock()
		return nil, &RouteError{Msg: "no page is connected to /tools"}
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
	var target *Registration
	switch len(matches) {
	case 0:
		d.mu.Unlock()
		return nil, &RouteError{Msg: noMatch(req)}
	case 1:
		target = &matches[0]
	default:
		var act []int
		for i, m := range matches {
			if m.ActiveTab {
				act = append(act, i)
			}
		}
		if len(act) != 1 {
			d.mu.Unlock()
			cands := make([]Candidate, len(matches))
			for i, m := range matches {
				cands[i] = Candidate{ClientID: m.ClientID, NS: m.NS, URL: m.URL, ActiveTab: m.ActiveTab}
				if m.Tab != nil {
					cands[i].Tab = m.Tab
				}
			}
			return nil, &RouteError{Msg: fmt.Sprintf("page tool %q is ambiguous: %d pages hold it; retry with ns and/or clientId", req.Name, len(matches)), Candidates: cands}
		}
		target = &matches[act[0]]
	}
	c := d.clients[target.ClientID]
	if len(c.pending) >= MaxPending {
		d.mu.Unlock()
		return nil, &ToolError{Msg: "too many calls in flight on that page"}
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
				return nil, &ToolError{Msg: "sending the call to the page failed: " + err.Error()}
			}
			sent = nil
		case r := <-ch:
			return r.value, r.err
		case <-t.C:
			forget()
			return nil, &ToolError{Msg: fmt.Sprintf("page tool %s/%s did not answer within %s", target.NS, req.Name, timeout)}
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
