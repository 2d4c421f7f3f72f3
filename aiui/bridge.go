package aiui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/aiui/tools"
)

// The backend as adapters.ToolBridge: the /tools directory to another
// adapter of the hub (geturl's plugin=aiui), routed by the directory's own
// rules (§4.5).
//
// Tool names: every page tool is listed as "ns/name" (its namespace and
// name), and each distinct name once more bare, "name", which routes like
// page_tools_call with only a name: the one page holding it, else the one
// on the active tab, else an ambiguous_tool error naming the candidates.
// When one namespace is registered by several pages (two tabs of one app),
// each also gets "ns/name@clientId". A name is a read when the tool's
// readOnlyHint says so, else by adapters.ReadOnlyTool's name rule; a bare
// or ns/name entry held by several pages reads only when every holder's
// tool does.

var _ adapters.ToolBridge = (*Server)(nil)

const (
	codeUnknownTool = "unknown_tool"
	codeAmbiguous   = "ambiguous_tool"
	codePageError   = "page_error"
)

// pageRoute is what a listed name calls.
type pageRoute struct {
	req  tools.CallRequest // name, and ns / clientId when the name gives them
	tool adapters.BridgeTool
}

func noPageErr(msg string) error {
	return adapters.NoPage(msg, "open the app with the aiui dev overlay (its page connects to /tools by itself); then retry the same URL")
}

// directory is the running backend's directory, or the offline error.
func (s *Server) directory() (*backend, error) {
	b := s.cur.Load()
	if b == nil {
		return nil, noPageErr("the aiui backend is not running")
	}
	if b.dir.Summary().Clients == 0 {
		return nil, noPageErr(tools.NoPageMsg)
	}
	return b, nil
}

// routes lists the directory's names in order (bare names first, in the
// directory's natural order) and what each calls.
func routes(regs []tools.Registration) ([]string, map[string]pageRoute) {
	type holder struct {
		reg  tools.Registration
		tool tools.Tool
	}
	var bareOrder, qualOrder []string
	bare, qual := map[string][]holder{}, map[string][]holder{}
	for _, r := range regs {
		for _, t := range r.Tools {
			q := r.NS + "/" + t.Name
			if bare[t.Name] == nil {
				bareOrder = append(bareOrder, t.Name)
			}
			if qual[q] == nil {
				qualOrder = append(qualOrder, q)
			}
			bare[t.Name] = append(bare[t.Name], holder{r, t})
			qual[q] = append(qual[q], holder{r, t})
		}
	}
	entry := func(hs []holder, req tools.CallRequest, name, where string) pageRoute {
		t := hs[0].tool
		read := true
		for _, h := range hs {
			read = read && adapters.ReadOnlyTool(h.tool.Name, h.tool.Annotations)
		}
		desc := strings.TrimSpace(t.Description + " " + where)
		return pageRoute{req: req, tool: adapters.BridgeTool{Name: name, Description: desc, InputSchema: t.InputSchema, Read: read}}
	}
	names := []string{}
	out := map[string]pageRoute{}
	add := func(name string, r pageRoute) {
		if _, dup := out[name]; !dup { // a bare name spelled like ns/name: the first wins
			names = append(names, name)
			out[name] = r
		}
	}
	for _, n := range bareOrder {
		hs := bare[n]
		var nss []string
		for _, h := range hs {
			nss = append(nss, h.reg.NS)
		}
		where := "(ns " + strings.Join(nss, ", ") + ")"
		if len(hs) > 1 {
			where = "(held by ns " + strings.Join(nss, ", ") + ": routed to the active tab's, else call ns/name)"
		}
		add(n, entry(hs, tools.CallRequest{Name: n}, n, where))
	}
	for _, q := range qualOrder {
		hs := qual[q]
		ns, name := hs[0].reg.NS, hs[0].tool.Name
		add(q, entry(hs, tools.CallRequest{Name: name, NS: ns}, q, ""))
		if len(hs) > 1 {
			for _, h := range hs {
				add(q+"@"+h.reg.ClientID, entry([]holder{h}, tools.CallRequest{Name: name, NS: ns, ClientID: h.reg.ClientID}, q+"@"+h.reg.ClientID, "(page "+h.reg.URL+")"))
			}
		}
	}
	return names, out
}

// BridgeTools implements adapters.ToolBridge.
func (s *Server) BridgeTools() ([]adapters.BridgeTool, error) {
	if rb := s.followed(); rb != nil {
		return rb.BridgeTools()
	}
	b, err := s.directory()
	if err != nil {
		return nil, err
	}
	return listed(b.dir.List()), nil
}

// listed is every name routes gives, in its order.
func listed(regs []tools.Registration) []adapters.BridgeTool {
	names, rs := routes(regs)
	out := make([]adapters.BridgeTool, len(names))
	for i, n := range names {
		out[i] = rs[n].tool
	}
	return out
}

// argsObject refuses arguments that are not a JSON object.
func argsObject(args json.RawMessage) error {
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || obj == nil {
		return &adapters.ToolError{Code: "invalid_arguments", Message: "the arguments must be a JSON object (the page tool's own)"}
	}
	return nil
}

// unknownTool is the error for a name the directory does not list.
func unknownTool(tool string) error {
	return &adapters.ToolError{Code: codeUnknownTool, Message: fmt.Sprintf("no page tool %q", tool),
		Hint: "list the pages' tools (plugin=aiui): call name, ns/name or ns/name@clientId as listed"}
}

// BridgeClassify implements adapters.ToolBridge: the routing is decided
// now, so an ambiguous or unknown name is refused before anything is
// journaled, and the tool that would run is the one classified.
func (s *Server) BridgeClassify(tool string, args json.RawMessage) (bool, error) {
	if rb := s.followed(); rb != nil {
		return rb.BridgeClassify(tool, args)
	}
	b, err := s.directory()
	if err != nil {
		return false, err
	}
	if err := argsObject(args); err != nil {
		return false, err
	}
	_, rs := routes(b.dir.List())
	r, ok := rs[tool]
	if !ok {
		return false, unknownTool(tool)
	}
	target, err := b.dir.Resolve(r.req)
	if err != nil {
		return false, routeError(err, r.req.Name)
	}
	for _, t := range target.Tools {
		if t.Name == r.req.Name {
			return adapters.ReadOnlyTool(t.Name, t.Annotations), nil
		}
	}
	return r.tool.Read, nil
}

// BridgeCall implements adapters.ToolBridge: the page's value as it is.
func (s *Server) BridgeCall(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	if rb := s.followed(); rb != nil {
		return rb.BridgeCall(ctx, tool, args)
	}
	b, err := s.directory()
	if err != nil {
		return nil, err
	}
	b.agentActivity()
	_, rs := routes(b.dir.List())
	r, ok := rs[tool]
	if !ok {
		return nil, &adapters.ToolError{Code: codeUnknownTool, Message: fmt.Sprintf("no page tool %q (any more)", tool)}
	}
	req := r.req
	req.Args = args
	v, err := b.dir.Call(ctx, req)
	var te *tools.ToolError
	switch {
	case err == nil:
		return v, nil
	case errors.As(err, &te):
		return nil, toolError(te.Code, te.Msg)
	case ctx.Err() != nil:
		return nil, toolError(tools.OutcomeUnknown, "the caller gave up before the page answered: "+err.Error())
	}
	return nil, routeError(err, req.Name)
}

// toolError is a call's failure after routing: the page's own error
// (code "") or the call's fate (tools.OutcomeUnknown, tools.Busy).
func toolError(code, msg string) error {
	if code == "" {
		return &adapters.ToolError{Code: codePageError, Message: msg}
	}
	return &adapters.ToolError{Code: code, Message: msg, Retryable: true, Hint: fateHint(code)}
}

// fateHint says what to do about a call the page did not answer.
func fateHint(code string) string {
	return map[string]string{tools.Busy: "the page has too many calls in flight; retry shortly",
		tools.OutcomeUnknown: "the page may or may not have run it: check the page's state before retrying"}[code]
}

// routeError turns a directory RouteError into the agent's: no page,
// an ambiguous name (with the candidates and the exact listed names that
// call each), or an unknown tool.
func routeError(err error, name string) error {
	var re *tools.RouteError
	if !errors.As(err, &re) {
		return err
	}
	switch {
	case re.Msg == tools.NoPageMsg:
		return noPageErr(re.Msg)
	case len(re.Candidates) > 0:
		perNS := map[string]int{}
		for _, c := range re.Candidates {
			perNS[c.NS]++
		}
		var alts []string
		for _, c := range re.Candidates {
			alt := "tool=" + c.NS + "/" + name
			if perNS[c.NS] > 1 {
				alt += "@" + c.ClientID
			}
			alts = append(alts, alt)
		}
		return &adapters.ToolError{Code: codeAmbiguous, Message: re.Error(),
			Hint: "call one page's tool by its listed name: " + strings.Join(alts, ", ")}
	}
	return &adapters.ToolError{Code: codeUnknownTool, Message: re.Msg}
}
