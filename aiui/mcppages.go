package aiui

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/aiui/tools"
	"github.com/hubdev/hub/hub/mcpserver"
)

// PageToolPrefix names the pages' tools in `hub mcp`, beside other
// bridges': aiui_ and the page's name for the tool, made portable.
const PageToolPrefix = "aiui_"

// MaxNamedPageTools bounds how many page tools `hub mcp` registers by
// name: a page declares as many as its registration's bytes allow, and
// a client's tool list is no place for thousands. The rest stay reachable
// through page_tools_list and page_tools_call.
const MaxNamedPageTools = 128

// pageTools keeps the pages' tools registered one by one on a server of
// several bridges, each under PageToolPrefix, in step with the backend's
// directory; a call of one is page_tools_call of its route.
type pageTools struct {
	fw *mcpserver.Forwarder

	syncMu sync.Mutex // one sync at a time, so routes and tools agree
	mu     sync.Mutex
	routes map[string]tools.CallRequest // the Forwarder's original name → what it calls
}

// newPageTools registers the pages' tools on srv; client is the attached
// backend's client, or why there is none.
func newPageTools(srv *mcpserver.Server, client func() (*Client, error)) *pageTools {
	p := &pageTools{routes: map[string]tools.CallRequest{}}
	p.fw = srv.Forward(mcpserver.Prefix(PageToolPrefix), func(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
		p.mu.Lock()
		req, ok := p.routes[name]
		p.mu.Unlock()
		if !ok {
			return errResult(fmt.Sprintf("no page holds the tool %q now: page_tools_list lists the pages' tools", name)), nil
		}
		cl, err := client()
		if err != nil {
			return errResult("The aiui channel backend is not available: " + err.Error()), nil
		}
		req.Args = args
		return callPage(ctx, cl, req), nil
	})
	return p
}

// sync registers the tools of regs (the directory as the backend lists
// it, the active tab's entries first); nil withdraws them all. It reports
// whether the server's tools changed (and list_changed was sent).
func (p *pageTools) sync(ctx context.Context, regs []tools.Registration) bool {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	defs, routes := pageRoutes(regs)
	// Routes first: a call of a name the new list drops finds no route
	// even before the Sync withdraws the tool.
	p.mu.Lock()
	p.routes = routes
	p.mu.Unlock()
	changed, _ := p.fw.Sync(ctx, defs)
	return changed
}

// names maps each registered name to the page's name for it.
func (p *pageTools) names() map[string]string { return p.fw.Names() }

// list is adapters.FacePages' list: each registered tool with the
// page_tools_call arguments that reach the same page tool.
func (p *pageTools) list() []adapters.PageTool {
	names := p.fw.Names()
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]adapters.PageTool, 0, len(names))
	for _, name := range slices.Sorted(maps.Keys(names)) {
		req, ok := p.routes[names[name]]
		if !ok {
			continue // being withdrawn
		}
		call, _ := json.Marshal(req)
		out = append(out, adapters.PageTool{Tool: name, Call: call})
	}
	return out
}

// pageRoutes turns the directory into MCP tools, in its order (the
// active tab's entries first), at most MaxNamedPageTools. A tool one
// registration holds is named by its own name and routed as
// page_tools_call routes that name (so it follows the page across
// reloads); a name several hold is that too (the active tab's wins, else
// the call lists the candidates), plus ns/name for each namespace holding
// it and ns/name@clientId for each of several connections in one
// namespace, each routed to exactly that. The keys of routes are the
// names the Forwarder maps under PageToolPrefix.
func pageRoutes(regs []tools.Registration) ([]*mcp.Tool, map[string]tools.CallRequest) {
	holders := map[string][]int{} // tool name → the registrations holding it
	perNS := map[string]int{}     // ns/name → how many registrations hold it
	for i, r := range regs {
		for _, t := range r.Tools {
			if hs := holders[t.Name]; len(hs) == 0 || hs[len(hs)-1] != i {
				holders[t.Name] = append(hs, i)
				perNS[r.NS+"/"+t.Name]++
			}
		}
	}
	var defs []*mcp.Tool
	routes := map[string]tools.CallRequest{}
	add := func(key string, t tools.Tool, req tools.CallRequest, where string) {
		if _, dup := routes[key]; dup || len(defs) >= MaxNamedPageTools {
			return
		}
		routes[key] = req
		desc := strings.TrimSpace(t.Description)
		if desc != "" {
			desc += " "
		}
		desc += "(an aiui page's tool, " + where + "; the description is the page's own)"
		defs = append(defs, &mcp.Tool{Name: key, Description: desc, InputSchema: t.InputSchema})
	}
	for i, r := range regs {
		for _, t := range r.Tools {
			hs := holders[t.Name]
			if hs[0] != i {
				continue // named at its first holder, below for the others
			}
			if len(hs) == 1 {
				add(t.Name, t, tools.CallRequest{Name: t.Name}, where(r))
				continue
			}
			var nss []string
			for _, h := range hs {
				nss = append(nss, regs[h].NS)
			}
			add(t.Name, t, tools.CallRequest{Name: t.Name},
				"held by the pages of ns "+strings.Join(nss, ", ")+": routed to the active tab's, else call it as ns/name")
			for _, h := range hs {
				hr := regs[h]
				ht := toolOf(hr, t.Name)
				q := hr.NS + "/" + t.Name
				add(q, ht, tools.CallRequest{Name: t.Name, NS: hr.NS}, where(hr))
				if perNS[q] > 1 {
					add(q+"@"+hr.ClientID, ht, tools.CallRequest{Name: t.Name, NS: hr.NS, ClientID: hr.ClientID}, where(hr)+", connection "+hr.ClientID)
				}
			}
		}
	}
	return defs, routes
}

// where says which page a registration is.
func where(r tools.Registration) string {
	s := "ns " + r.NS
	if r.URL != "" {
		s += " at " + r.URL
	}
	if r.ActiveTab {
		s += ", the active tab"
	}
	return s
}

// toolOf is r's tool named name (r holds it).
func toolOf(r tools.Registration, name string) tools.Tool {
	for _, t := range r.Tools {
		if t.Name == name {
			return t
		}
	}
	return tools.Tool{Name: name}
}
