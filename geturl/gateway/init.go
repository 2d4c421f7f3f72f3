package gateway

import (
	"strings"

	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
	"github.com/hubdev/hub/hub/jsonw"
)

// MaxInit is the spec's ceiling on the Init contract with mutations and
// plugin discovery enabled (1.6 KiB of UTF-8).
const MaxInit = 1638

// initContract is the compact, model-neutral bootstrap: the exact bases,
// endpoints as [baseRef, suffix] (the callable URL is bases[ref]+suffix),
// the /project root, permissions, the raw-fetch requirement and the rules
// an agent needs before its second call. Everything else is disclosed
// later, by exact URLs in answers and by /k.
type initContract struct {
	OK          bool        `json:"ok"`
	Protocol    string      `json:"protocol"`
	Bases       route.Bases `json:"bases"`
	Endpoints   endpoints   `json:"endpoints"`
	Compat      string      `json:"compatibilityEndpoints"`
	Root        string      `json:"root"`
	Project     string      `json:"project"`
	Permissions permissions `json:"permissions"`
	Fetch       string      `json:"fetch"`
	Rules       []string    `json:"rules"`
}

type permissions struct {
	Read     bool `json:"read"`
	Write    bool `json:"write"`
	Terminal bool `json:"terminal"`
}

// endpoint is one [baseRef, suffix] pair under its tool name.
type endpoint struct {
	tool, ref, suffix string
}

// endpoints marshal as an object in table order.
type endpoints []endpoint

func (es endpoints) MarshalJSON() ([]byte, error) { return es.appendJSON(nil), nil }

func (es endpoints) appendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, e := range es {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonw.String(b, e.tool)
		b = append(b, ":["...)
		b = jsonw.String(b, e.ref)
		b = append(b, ',')
		b = jsonw.String(b, e.suffix)
		b = append(b, ']')
	}
	return append(b, '}')
}

// AppendJSON (transport.Appender) appends the contract exactly as
// encoding/json writes it with HTML escaping off, without reflection.
func (c *initContract) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"ok":`...)
	b = jsonw.Bool(b, c.OK)
	b = append(b, `,"protocol":`...)
	b = jsonw.String(b, c.Protocol)
	b = append(b, `,"bases":{"r":`...)
	b = jsonw.String(b, c.Bases.Read)
	if c.Bases.Mutation != "" {
		b = append(b, `,"m":`...)
		b = jsonw.String(b, c.Bases.Mutation)
	}
	b = append(b, `},"endpoints":`...)
	b = c.Endpoints.appendJSON(b)
	b = append(b, `,"compatibilityEndpoints":`...)
	b = jsonw.String(b, c.Compat)
	b = append(b, `,"root":`...)
	b = jsonw.String(b, c.Root)
	b = append(b, `,"project":`...)
	b = jsonw.String(b, c.Project)
	b = append(b, `,"permissions":{"read":`...)
	b = jsonw.Bool(b, c.Permissions.Read)
	b = append(b, `,"write":`...)
	b = jsonw.Bool(b, c.Permissions.Write)
	b = append(b, `,"terminal":`...)
	b = jsonw.Bool(b, c.Permissions.Terminal)
	b = append(b, `},"fetch":`...)
	b = jsonw.String(b, c.Fetch)
	b = append(b, `,"rules":`...)
	b = jsonw.Strings(b, c.Rules)
	return append(b, '}'), nil
}

// Rules of the contract. They are words an agent acts on; every byte counts
// against MaxInit, so each says one thing.
const (
	fetchRule = "fetch every URL in raw, unconverted mode (no markdown, summary or extraction); without one, stop: transport unavailable"
	ruleURL   = "URL = bases[ref]+suffix; replace <…> only; omit unused optional params"
	ruleRaw   = "raw= goes last: all after it is content. Escapes: ~n newline ~t tab ~h # ~p % ~q + ~s space ~a & ~~ ~ ~uXXXX; + is a space"
	ruleRead  = "/r: up to 8 path=, each optionally followed by start=&end=; if truncated, fetch next. /f?name= finds files (raw= by content). /g is literal; regex=1 for regex"
	ruleErr   = "errors are HTTP 200 ok:false; fetch repair/next/retry/poll/repeat URLs exactly as returned"
	ruleCut   = "cut-off answer: same base+/z?last=1&part=0"
	ruleKit   = "/k lists plugins; /k?plugin=<id> gives tool schemas"
	ruleMut   = "one hunk in one file: /e; new or whole file: /w (after a complete read); 2+ edits or files: one /a patch; pending: poll /j"
	rulePoll  = "pending: poll /j" // ruleMut for a session without the file tools
)

// initContract builds the contract for a session reached through origin.
func (g *Gateway) initContract(origin string, s route.LiveSession) *initContract {
	b := bases(origin, s)
	perm := s.Permissions()
	c := &initContract{
		OK: true, Protocol: "geturl/0", Bases: b, Compat: compatTemplate, Root: sandbox.VirtualRoot, Project: s.Project(),
		Permissions: permissions{Read: true, Write: perm.Write, Terminal: perm.Terminal},
		Fetch:       fetchRule,
		Rules:       []string{ruleURL, ruleRaw, ruleRead, ruleErr, ruleCut, ruleKit},
	}
	mutations := false
	for _, rt := range g.opts.Kernel.Routes() {
		if rt.Init == "" || !rt.Served() || !allowed(rt, perm) {
			continue
		}
		ref := "r"
		if rt.Base == route.MutationBase {
			if b.Mutation == "" {
				continue
			}
			ref, mutations = "m", true
		}
		c.Endpoints = append(c.Endpoints, endpoint{tool: rt.Tool, ref: ref, suffix: rt.Init})
	}
	switch {
	case mutations && perm.Write:
		c.Rules = append(c.Rules, ruleMut)
	case mutations:
		c.Rules = append(c.Rules, rulePoll)
	}
	return c
}

// allowed hides mutation routes a session's permissions rule out: file
// tools need write, the terminal needs terminal; staging and results serve
// both.
func allowed(rt *route.Entry, p route.Permissions) bool {
	switch rt.Tool {
	case "write", "edit", "apply_patch":
		return p.Write
	case "terminal":
		return p.Terminal
	}
	return true
}

// initSpec declares Init's parameters: none. The spec's strict query rules
// cover Init too, so anything after its ? is refused, not ignored.
var initSpec = &transport.Spec{Route: "Init"}

// initQuery refuses an Init URL carrying parameters. The correction is
// always the same deterministic one, the Init URL without its query, so
// the refusal carries it as the repair even where the parameters
// themselves have none.
//
// The Init URL is origin+path; it is built only for a refusal.
func initQuery(target, origin, path string) *transport.Error {
	if len(target) <= transport.MaxTarget && strings.HasPrefix(target, "/") && !strings.Contains(target, "?") {
		return nil // what ParseTarget finds in it: no pairs, no raw=
	}
	t, terr := transport.ParseTarget(target)
	if terr == nil {
		if len(t.Pairs) == 0 && !t.HasRaw {
			return nil // no query, or a bare ?
		}
		_, terr = transport.Bind(t, initSpec, "")
	}
	if terr == nil { // cannot happen: nothing binds to a spec with no parameters
		terr = &transport.Error{Code: transport.CodeUnknownParameter, Detail: "Init takes no parameters"}
	}
	terr.Hint = "Init takes no parameters; fetch the Init URL exactly as given"
	terr.Retryable, terr.Action, terr.Repair = true, fault.ActionFetchRepair, origin+path
	return terr
}
