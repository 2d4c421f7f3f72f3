package mutation

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/hubdev/hub/geturl/engine/filechange"
	"github.com/hubdev/hub/geturl/engine/intents"
	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// recordAnswer is a journaled request's answer: the intent's record.
type recordAnswer struct {
	OK    bool          `json:"ok"`
	Call  string        `json:"call"`
	Tool  string        `json:"tool"`
	State intents.State `json:"state"`
	// Replayed: this request found the intent already recorded and ran
	// nothing; Replays counts such requests.
	Replayed bool `json:"replayed,omitempty"`
	Replays  int  `json:"replays,omitempty"`
	// Result is the succeeded intent's result.
	Result json.RawMessage `json:"result,omitempty"`
	// ResultEvicted: the journal kept only that the intent ran, not its
	// result (it holds a bounded history).
	ResultEvicted bool   `json:"resultEvicted,omitempty"`
	Poll          string `json:"poll,omitempty"`
	Repeat        string `json:"repeat,omitempty"`
	Hint          string `json:"hint,omitempty"`
}

// journaled runs in through the session's journal, with in.Run and
// in.Call taken from the request's run= and call=: a new intent starts
// its one execution (detached from the request), a replay starts
// nothing. Either way the request may wait up to wait= for the record to
// finish, then gets the record.
func (h *Host) journaled(ctx context.Context, c *route.Call, st *State, in intents.Intent) (any, *transport.Error) {
	root := c.Session.Scope().Root()
	exec := in.Exec
	in.Exec = func(ctx context.Context, run *intents.Run) (any, *fault.Error) {
		v0 := h.ver.get(root)
		res, err := exec(ctx, run)
		tag := v0
		if err == nil {
			h.noteChange(c.Session, run.Call(), in.Tool, res)
			// A change made by someone else while this ran counts as a
			// change since it ran.
			if v := h.ver.bump(root); v == v0+1 {
				tag = v
			}
		}
		run.SetTag(tag)
		return res, err
	}
	in.Run, in.Call = c.Args.Text("run"), c.Args.Text("call")
	in.Origin = origin(c)
	rec, start, f := st.Journal.Begin(in)
	if f != nil {
		return nil, transport.ErrorOf(f)
	}
	if start != nil {
		h.spawn(st, start)
	}
	return h.answer(ctx, c, st, rec, start == nil)
}

// noteChange tells Options.Changed what a file mutation changed.
func (h *Host) noteChange(sess route.Session, call, tool string, res any) {
	cp, ok := res.(filechange.Changes)
	if h.changed == nil || !ok {
		return
	}
	var paths []string
	for _, v := range cp.ChangedPaths() {
		if rel, ok := strings.CutPrefix(v, sandbox.VirtualRoot+"/"); ok {
			paths = append(paths, rel)
		}
	}
	if len(paths) > 0 {
		h.changed(Change{Session: sess, Call: call, Tool: tool, Paths: paths})
	}
}

// answer is the record's answer, after waiting up to wait= for it to
// finish; replayed marks a request that found it.
func (h *Host) answer(ctx context.Context, c *route.Call, st *State, rec intents.Record, replayed bool) (any, *transport.Error) {
	c.Intent, c.Replayed = rec.Call, replayed
	if ms := c.Args.IntOr("wait", 0); ms > 0 && !rec.State.Finished() && !rec.Evicted {
		rec, _ = st.Journal.Wait(ctx, rec.Call, waitFor(ms))
	}
	return h.render(c, rec, replayed, c.Session.Scope().Root())
}

// render answers a record; replayed marks a request that found it.
func (h *Host) render(c *route.Call, rec intents.Record, replayed bool, root string) (any, *transport.Error) {
	if rec.State == intents.Failed && rec.Err != nil && !rec.Evicted {
		e := transport.ErrorOf(rec.Err)
		e.Repair = foregroundRepair(c, rec)
		e.With("call", rec.Call).With("tool", rec.Tool).With("state", string(rec.State))
		if replayed {
			e.With("replayed", true).With("replays", rec.Replays)
		}
		if e.Retryable && e.Action != fault.ActionCorrectRequest {
			if o := recoveryOrigin(c, rec); o != "" {
				if u := c.Bases.Mutation + withRun(o, intents.DeriveRun(rec.Call, "retry", 0)); fits(u) {
					e.Retry = u
					e.Hint = strings.TrimSpace(e.Hint + " — then fetch retry as returned: this URL is journaled and keeps answering this failure")
				}
			}
		}
		return nil, e
	}
	a := &recordAnswer{OK: true, Call: rec.Call, Tool: rec.Tool, State: rec.State, Replayed: replayed, Result: rec.Result, ResultEvicted: rec.Evicted}
	if replayed {
		a.Replays = rec.Replays
	}
	switch {
	case !rec.State.Finished():
		a.Poll = c.Bases.Mutation + "/j?call=" + transport.Encode(rec.Call) + "&wait=" + strconv.Itoa(h.pollWait)
		a.Hint = "the intent is " + string(rec.State) + ": fetch poll (as returned) until it has finished; fetching this URL again runs nothing twice"
	case rec.Evicted:
		a.Hint = "this intent already ran (" + string(rec.State) + "); its result is no longer kept"
	}
	if replayed && rec.Tool == toolTerminal && rec.State.Finished() {
		if v := h.ver.get(root); v > rec.Tag {
			if o := recoveryOrigin(c, rec); o != "" {
				if u := c.Bases.Mutation + withRun(o, intents.DeriveRun(rec.Call, "repeat", v)); fits(u) {
					a.Repeat = u
					a.Hint = "this command already ran and was not run again; the project has changed since: fetch repeat to run it once more"
				}
			}
		} else if a.Hint == "" {
			a.Hint = "this command already ran and was not run again; nothing in the project has changed since"
		}
	}
	return a, nil
}

// fits reports whether an exact URL's request-target (from the path on)
// is within transport.MaxTarget: a request near the limit has no room
// for the run= a retry or repeat adds, and a URL the transport itself
// refuses must not be offered.
func fits(u string) bool {
	n := len(u)
	if _, rest, ok := strings.Cut(u, "://"); ok {
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			n = len(rest) - i
		}
	}
	return n <= transport.MaxTarget
}

// origin is the request as written from its route on, for Intent.Origin.
func origin(c *route.Call) string {
	if c.Target == nil {
		return ""
	}
	return c.Target.Rewrite(c.Route.Path, nil, "")
}

// recoveryOrigin is the request a retry or repeat URL repeats: the
// intent's own (a /j poll has no other), else this request's.
func recoveryOrigin(c *route.Call, rec intents.Record) string {
	if rec.Origin != "" {
		return rec.Origin
	}
	if c.Route.Path != "/j" {
		return origin(c)
	}
	return ""
}

// withRun rewrites a request (route and query as written) with run=nonce
// in place of any run= or call=, just before the raw tail; everything
// else stays byte for byte as the agent wrote it.
func withRun(o, nonce string) string {
	route, query, _ := strings.Cut(o, "?")
	t, err := transport.ParseTarget(route + "?" + query)
	if err != nil {
		return ""
	}
	return t.Rewrite(route, func(key string) bool { return key == "run" || key == "call" }, "run="+nonce)
}

// Journaled runs a mutation that is not one of the native routes (a
// plugin's, through /k) through the session's journal exactly like the
// native ones: identity from in.Tool, in.Args and the request's
// run=/call=, one
// execution detached from the request, the record as the answer.
func (h *Host) Journaled(ctx context.Context, c *route.Call, in intents.Intent) (any, *transport.Error) {
	st, terr := prepare(c, "")
	if terr != nil {
		return nil, terr
	}
	return h.journaled(ctx, c, st, in)
}

// Replayed answers c from the journal when this generation already holds
// the intent in (in.Exec is not used): a journaled URL fetched again
// learns its outcome even when what would run it is not there now (a
// plugin gone, a bridge that cannot classify the call while it is down).
// held is false when the journal does not hold it; nothing is recorded.
func (h *Host) Replayed(ctx context.Context, c *route.Call, in intents.Intent) (res any, held bool, terr *transport.Error) {
	st, terr := prepare(c, "")
	if terr != nil {
		return nil, false, nil
	}
	in.Run, in.Call = c.Args.Text("run"), c.Args.Text("call")
	rec, held, _ := st.Journal.Replay(in)
	if !held {
		return nil, false, nil
	}
	res, terr = h.answer(ctx, c, st, rec, true)
	return res, true, terr
}

// Origin is the request as written from its route on ("/k?plugin=…"),
// for repair URLs that send the same request to another base.
func Origin(c *route.Call) string { return origin(c) }
