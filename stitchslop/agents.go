package stitchslop

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// AgentHeader names the agent behind a control request (a face's id, or
// "shell"); a label for the status report, never a credential: the key is.
const AgentHeader = "x-stitchslop-agent"

// agentHeaderKey is http.CanonicalHeaderKey(AgentHeader).
const agentHeaderKey = "X-Stitchslop-Agent"

// Agents recently seen are reported for this long after their last call.
const agentRecent = 10 * time.Minute

// maxAgents bounds the agent book; the least recent idle one goes first.
const maxAgents = 64

type agentKey struct{}

// withAgent names the agent a call is made for (request-scoped, like a
// request id): the status report says who drives the tab.
func withAgent(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, agentKey{}, id)
}

// agentFrom is the agent ctx names, "" for none.
func agentFrom(ctx context.Context) string {
	id, _ := ctx.Value(agentKey{}).(string)
	return id
}

// requestAgent is the agent a control request names (AgentHeader), else
// "shell": every keyed client that does not name itself is a shell.
func requestAgent(r *http.Request) string {
	v := r.Header[agentHeaderKey]
	if len(v) == 1 {
		if id := clip(strings.TrimSpace(v[0]), 64); id != "" {
			return id
		}
	}
	return "shell"
}

// requestAgentOr is the agent a request names, else fallback (a face
// names itself in the query too).
func requestAgentOr(r *http.Request, fallback string) string {
	if id := requestAgent(r); id != "shell" || fallback == "" {
		return id
	}
	return fallback
}

// AgentReport is one agent that drives (or follows) the tab: calls go to
// the tab side by side, so several may drive at once, and each is told
// who else does.
type AgentReport struct {
	ID       string    `json:"id"`
	Calls    int       `json:"calls"`
	InFlight int       `json:"inFlight"`
	LastCall time.Time `json:"lastCall,omitzero"`
	// Following says it holds the event stream (an MCP face of another
	// process).
	Following bool `json:"following,omitempty"`
}

// agentBook counts, per agent, the calls of one run.
type agentBook struct {
	mu   sync.Mutex
	byID map[string]*agentState
}

type agentState struct {
	calls, inFlight, streams int
	last                     time.Time
}

// get is id's entry, made (and the book bounded) when new. Under b.mu.
func (b *agentBook) get(id string) *agentState {
	if b.byID == nil {
		b.byID = map[string]*agentState{}
	}
	a := b.byID[id]
	if a != nil {
		return a
	}
	if len(b.byID) >= maxAgents {
		var oldest string
		var t time.Time
		for k, v := range b.byID {
			if v.inFlight == 0 && v.streams == 0 && (oldest == "" || v.last.Before(t)) {
				oldest, t = k, v.last
			}
		}
		if oldest == "" {
			return &agentState{} // every one busy: count this one nowhere
		}
		delete(b.byID, oldest)
	}
	a = &agentState{}
	b.byID[id] = a
	return a
}

// begin counts a call of id going to the tab; end(a) is its return.
func (b *agentBook) begin(id string) *agentState {
	if id == "" {
		id = "in-process"
	}
	b.mu.Lock()
	a := b.get(id)
	a.calls++
	a.inFlight++
	a.last = time.Now()
	b.mu.Unlock()
	return a
}

// end counts the return of the call begin counted in a.
func (b *agentBook) end(a *agentState) {
	b.mu.Lock()
	a.inFlight--
	b.mu.Unlock()
}

// follow counts id's event stream until the returned end.
func (b *agentBook) follow(id string) (end func()) {
	b.mu.Lock()
	a := b.get(id)
	a.streams++
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		a.streams--
		b.mu.Unlock()
	}
}

// report lists the agents driving or following now, or recently: most
// recent first.
func (b *agentBook) report() []AgentReport {
	now := time.Now()
	b.mu.Lock()
	out := make([]AgentReport, 0, len(b.byID))
	for id, a := range b.byID {
		if a.inFlight == 0 && a.streams == 0 && now.Sub(a.last) > agentRecent {
			continue
		}
		out = append(out, AgentReport{ID: id, Calls: a.calls, InFlight: a.inFlight, LastCall: a.last, Following: a.streams > 0})
	}
	b.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].LastCall.Equal(out[j].LastCall) {
			return out[i].LastCall.After(out[j].LastCall)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// othersThan is agents without id: who else drives the tab.
func othersThan(agents []AgentReport, id string) []AgentReport {
	out := make([]AgentReport, 0, len(agents))
	for _, a := range agents {
		if a.ID != id {
			out = append(out, a)
		}
	}
	return out
}

// agentNames lists ids for a sentence.
func agentNames(agents []AgentReport) string {
	ids := make([]string, len(agents))
	for i, a := range agents {
		ids[i] = a.ID
	}
	return strings.Join(ids, ", ")
}
