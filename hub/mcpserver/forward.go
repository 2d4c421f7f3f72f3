package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CallFunc runs a forwarded tool: name is the page's own name for it (not
// the registered one), args the raw arguments object, nil when absent.
// Its result is content, isError and perhaps structuredContent and _meta;
// the multi-round-trip fields are not for page tools (the fast path, see
// fastcall.go, does not send input requests).
type CallFunc func(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error)

// Dropped says why a page tool was not registered.
type Dropped struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Forwarder registers one page's tools on a Server, each under its own
// name (mapped by a Namer) with the page's raw JSON schema, and routes
// calls back to the page. A Server may hold several (one per bridge).
type Forwarder struct {
	srv   *Server
	owner int
	name  Namer
	call  CallFunc

	mu  sync.Mutex
	cur map[string]forwarded // registered name → what is registered
}

// forwarded is one registered page tool; equal values mean nothing to
// re-register.
type forwarded struct {
	original    string
	fingerprint string // the registered tool as JSON
}

// Forward returns a Forwarder for one page; name nil means Identity, call
// nil answers every call with an error result.
func (s *Server) Forward(name Namer, call CallFunc) *Forwarder {
	if name == nil {
		name = Identity
	}
	if call == nil {
		call = func(context.Context, string, json.RawMessage) (*mcp.CallToolResult, error) {
			return ErrorResult("this tool has no handler"), nil
		}
	}
	s.mu.Lock()
	owner := s.nextOwner
	s.nextOwner++
	s.mu.Unlock()
	return &Forwarder{srv: s, owner: owner, name: name, call: call, cur: map[string]forwarded{}}
}

// Sync makes the registered tools the page's tools: new ones added, changed
// ones replaced, missing ones removed (nil removes all: the page detached).
// When anything changed it sends one notifications/tools/list_changed,
// however many tools changed. Tools that cannot be registered are
// reported, not registered: a missing or repeated name, a schema that is
// not an object schema, a name that clashes twice.
//
// Names are mapped deterministically: page tools whose mapped names
// collide, or whose mapped name another tool of the server holds, get the
// name with a hash of the original appended, and every renamed tool
// shows its original name in its description.
func (f *Forwarder) Sync(ctx context.Context, tools []*mcp.Tool) (changed bool, dropped []Dropped) {
	f.mu.Lock()
	defer f.mu.Unlock()

	type want struct {
		tool     *mcp.Tool // our copy, named as registered
		original string
	}
	var wants []want
	seen := map[string]bool{}
	count := map[string]int{}
	for _, t := range tools {
		switch {
		case t == nil || t.Name == "":
			dropped = append(dropped, Dropped{Name: "", Reason: "missing name"})
			continue
		case seen[t.Name]:
			dropped = append(dropped, Dropped{Name: t.Name, Reason: "duplicate name (first kept)"})
			continue
		}
		seen[t.Name] = true
		schema, err := schemaOf(t.InputSchema)
		if err != nil {
			dropped = append(dropped, Dropped{Name: t.Name, Reason: err.Error()})
			continue
		}
		c := *t
		c.InputSchema = schema
		c.Name = f.name(t.Name)
		wants = append(wants, want{&c, t.Name})
		count[c.Name]++
	}
	// Every holder of a shared name is renamed, so the result does not
	// depend on the order the page listed its tools in.
	for _, w := range wants {
		if count[w.tool.Name] > 1 {
			w.tool.Name = hashedName(w.tool.Name, w.original)
		}
	}

	next := make(map[string]forwarded, len(wants))
	var adds []want
	for pos, w := range wants {
		name, ok := f.place(w.tool.Name, w.original, pos, next)
		if !ok {
			dropped = append(dropped, Dropped{Name: w.original, Reason: fmt.Sprintf("no usable tool name (%q is invalid or taken)", w.tool.Name)})
			continue
		}
		w.tool.Name = name
		if name != w.original {
			w.tool.Description = describe(w.tool.Description, w.original)
		}
		fp, _ := json.Marshal(w.tool)
		next[name] = forwarded{original: w.original, fingerprint: string(fp)}
		if f.cur[name] != next[name] {
			adds = append(adds, w)
		}
	}

	var gone []string
	for name := range f.cur {
		if _, ok := next[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		for _, name := range gone {
			f.srv.dropFast(name)
		}
		f.srv.sdk.RemoveTools(gone...)
		for _, name := range gone {
			f.srv.release(name, f.owner)
		}
		changed = true
	}
	for _, w := range adds {
		name := w.tool.Name
		if err := f.srv.register(w.tool, f.handler(w.original)); err != nil {
			dropped = append(dropped, Dropped{Name: w.original, Reason: err.Error()})
			delete(next, name)
			f.srv.release(name, f.owner)
			if _, was := f.cur[name]; was {
				// The page's new definition is unusable; its old one must
				// not stay behind under the same name.
				f.srv.dropFast(name)
				f.srv.sdk.RemoveTools(name)
				changed = true
			}
			continue
		}
		f.srv.setFast(name, fastTool{call: f.call, original: w.original})
		changed = true
	}
	f.cur = next
	if changed {
		if err := f.srv.NotifyToolsChanged(ctx); err != nil {
			f.srv.log.Debug("list_changed not delivered", "err", err)
		}
	}
	for _, d := range dropped {
		f.srv.log.Warn("page tool not forwarded", "tool", d.Name, "reason", d.Reason)
	}
	return changed, dropped
}

// place claims name (or, when another tool holds it, the hashed form of
// it) for this forwarder at pos.
func (f *Forwarder) place(name, original string, pos int, taken map[string]forwarded) (string, bool) {
	for _, n := range []string{name, hashedName(name, original)} {
		if _, dup := taken[n]; dup || !validToolName(n) {
			continue
		}
		if f.srv.claim(n, f.owner, pos) {
			return n, true
		}
	}
	return "", false
}

// Clear removes every tool of this page (it detached).
func (f *Forwarder) Clear(ctx context.Context) (changed bool) {
	changed, _ = f.Sync(ctx, nil)
	return changed
}

// Names maps each registered name to the page's own name for it.
func (f *Forwarder) Names() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]string, len(f.cur))
	for name, fw := range f.cur {
		out[name] = fw.original
	}
	return out
}

func (f *Forwarder) handler(original string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return f.call(ctx, original, req.Params.Arguments)
	}
}

// schemaOf checks a page's input schema, in whatever Go form it came.
func schemaOf(s any) (json.RawMessage, error) {
	raw, ok := s.(json.RawMessage)
	if !ok && s != nil {
		b, err := json.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("inputSchema cannot be encoded: %v", err)
		}
		raw = b
	}
	return CheckSchema(raw)
}

// describe adds the page's own name to a renamed tool's description, so the
// model can match it to what the page calls it.
func describe(desc, original string) string {
	note := fmt.Sprintf("(page tool %q)", original)
	if desc == "" {
		return note
	}
	return desc + " " + note
}
