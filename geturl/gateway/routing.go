package gateway

import (
	"net/http"
	"strings"

	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// serveRoute answers an authenticated /v0/<tok>/<route>: the route on its
// own base goes to the kernel; a route of the other base is refused with
// directions to it (route.WrongBase); anything else is unknown_route.
func (g *Gateway) serveRoute(w http.ResponseWriter, r *http.Request, rec *record, target, origin string, sess route.LiveSession, kind route.Capability, path string) {
	on := route.ReadBase
	if kind == route.CapMutation {
		on = route.MutationBase
	}
	k := g.opts.Kernel
	rt, declared := g.route(path)
	if declared {
		rec.route, rec.tool = path, rt.Tool
	} else {
		rec.route = "unknown"
	}
	c := &route.Call{Session: sess, Bases: bases(origin, sess), On: on, Route: rt, Head: r.Method == http.MethodHead}
	t, terr := transport.ParseTarget(target)
	if terr != nil {
		g.answer(w, r, rec, c, nil, terr)
		return
	}
	switch {
	case !declared:
		g.answer(w, r, rec, c, nil, k.UnknownRoute(path, on))
	case c.Head && on == route.MutationBase:
		// HEAD is a probe (link previewers, readers checking the type):
		// it must never create or run an intent. The GET runs it.
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		rec.status = http.StatusOK
	case rt.OnBase(on):
		v, err := k.Serve(r.Context(), c, t)
		rec.intent, rec.replayed = c.Intent, c.Replayed
		g.answer(w, r, rec, c, v, err)
	default:
		g.answer(w, r, rec, c, nil, g.otherBase(c, rt, t, target))
	}
}

// otherBase answers a route that belongs to the other capability base.
func (g *Gateway) otherBase(c *route.Call, rt *route.Entry, t *transport.Target, target string) *transport.Error {
	_, query, _ := strings.Cut(target, "?")
	if c.On == route.ReadBase && rt.Path == "/s" {
		if p, ok := statPath(t); ok {
			return &transport.Error{
				Code: transport.CodeWrongCapabilityBase, Detail: "/s is staging (mutation base); stat is /t",
				Hint: "for path metadata use /t", Retryable: true, Action: fault.ActionFetchRepair,
				Repair: c.Bases.Read + "/t?path=" + p,
			}
		}
	}
	other := route.MutationBase
	if c.On == route.MutationBase {
		other = route.ReadBase
	}
	if !rt.Served() {
		return g.opts.Kernel.UnknownRoute(rt.Path, c.On)
	}
	if c.Bases.Of(other) == "" {
		return &transport.Error{
			Code: route.CodeMutationsDisabled, Detail: rt.Path + " needs the mutation capability",
			Hint: "this session is read-only; the operator can enable file writes or terminal for the project",
		}
	}
	suffix := rt.Path
	if query != "" {
		suffix += "?" + query
	}
	name := map[route.BaseKind]string{route.ReadBase: "read (bases.r)", route.MutationBase: "mutation (bases.m)"}
	return route.WrongBase(c, rt.Path+" is served on the "+name[other]+" base", suffix)
}

// statPath recognises /s?path=<p> used for stat: a path and nothing that
// belongs to staging. It returns the path exactly as written.
func statPath(t *transport.Target) (string, bool) {
	if t.HasRaw || len(t.Pairs) != 1 || t.Pairs[0].Key != "path" || t.Pairs[0].Value == "" {
		return "", false
	}
	return t.Pairs[0].Value, true
}
