package opencode

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/hubdev/hub/geturl/plugin"
)

const (
	groupTitle      = "geturl workers"
	workerPrefix    = "geturl worker: "
	defaultWorkWait = 10 * time.Second
)

// groupRules make the group session inert: it only holds workers, and a
// prompt sent to it by hand can run nothing.
var groupRules = []Rule{{Permission: "*", Pattern: "*", Action: "deny"}}

// group finds or creates the root's group session, the OpenCode parent of
// every worker geturl starts for that root.
func (c *call) group(ctx context.Context) (ocSession, error) {
	root := c.scope.Root()
	c.p.mu.Lock()
	id := c.p.groups[root]
	c.p.mu.Unlock()
	if id != "" {
		var s ocSession
		if err := c.client().do(ctx, http.MethodGet, "/session/"+id, nil, &s); err == nil {
			return s, nil
		}
	}
	find := func() (ocSession, bool, error) {
		ss, _, err := c.listSessions(ctx, root, true)
		if err != nil {
			return ocSession{}, false, err
		}
		var best ocSession
		found := false
		for _, s := range ss {
			if m, ok := sessionMeta(s); ok && m.Kind == "group" && s.Directory == root && (!found || s.Time.Created < best.Time.Created) {
				best, found = s, true
			}
		}
		return best, found, nil
	}
	s, ok, err := find()
	if err != nil {
		return s, err
	}
	if !ok {
		body := map[string]any{"title": groupTitle, "metadata": map[string]any{metaKey: meta{Kind: "group"}}, "permission": groupRules}
		err = c.client().do(ctx, http.MethodPost, query("/session", "directory", root), body, &s)
		if err != nil {
			if !ambiguous(err) {
				return s, err
			}
			// Maybe created: look again rather than create a second one.
			if s, ok, err = find(); err != nil || !ok {
				return s, toolError(errOr(err, "could not create the worker group"))
			}
		}
	}
	c.p.mu.Lock()
	c.p.groups[root] = s.ID
	c.p.mu.Unlock()
	return s, nil
}

func errOr(err error, msg string) error {
	if err != nil {
		return err
	}
	return plugin.Errorf(CodeAmbiguous, true, "%s", msg)
}

// worker fetches a visible worker of geturl's.
func (c *call) getWorker(ctx context.Context, id string) (ocSession, string, meta, error) {
	s, wd, err := c.getSession(ctx, id)
	if err != nil {
		return s, "", meta{}, err
	}
	m, ok := sessionMeta(s)
	if !ok || m.Kind != "worker" {
		return s, "", meta{}, &plugin.Error{Code: CodeNotWorker, Detail: "session " + id + " is not a geturl worker",
			Hint: "drive other sessions with opencode_session"}
	}
	return s, wd, m, nil
}

// listWorkers lists geturl's visible workers of the root.
func (c *call) listWorkers(ctx context.Context) ([]ocSession, []string, []meta, error) {
	g, err := c.group(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	var kids []ocSession
	if err := c.client().do(ctx, http.MethodGet, "/session/"+g.ID+"/children", nil, &kids); err != nil {
		return nil, nil, nil, err
	}
	var ss []ocSession
	var wds []string
	var ms []meta
	for _, k := range kids {
		m, ok := sessionMeta(k)
		wd, vis := c.visible(k)
		if ok && vis && m.Kind == "worker" {
			ss, wds, ms = append(ss, k), append(wds, wd), append(ms, m)
			c.p.track(k)
		}
	}
	sortNewest3(ss, wds, ms)
	return ss, wds, ms, nil
}

// recordTurn appends mid to the worker's turns and re-applies this
// caller's ceiling, both before the prompt is sent: the message identity
// is durable before it is used, and a worker never runs for a caller with
// more than that caller's authority.
func (c *call) recordTurn(ctx context.Context, s ocSession, mid string) (ocSession, error) {
	ceiling := Ceiling(c.auth, c.p.cfg.AllowNested)
	narrowed, err := c.refuseBusyNarrowing(ctx, s, ceiling)
	if err != nil {
		return ocSession{}, err
	}
	m, _ := sessionMeta(s)
	m.Turns = append(m.Turns, mid)
	body := map[string]any{"metadata": withMeta(s, m)}
	if !narrowed {
		// Only the widest caller gets here (refuseBusyNarrowing appended
		// every narrower ceiling already), so skipping rules the session
		// already ends with can never leave a prompt wider than its
		// caller: a ceiling appended meanwhile is at most as wide.
		if add := appendable(s.Permission, ceiling); len(add) > 0 {
			body["permission"] = add
		}
	}
	var out ocSession
	err = c.client().do(ctx, http.MethodPatch, query("/session/"+s.ID, "directory", s.Directory), body, &out)
	return out, err
}

// refuseBusyNarrowing keeps a caller with less than write and terminal
// from queueing a prompt behind a running turn. OpenCode reads a session's
// rules when its prompt loop starts and runs every prompt queued meanwhile
// under them, so the ceiling this call re-applies would not bind that
// prompt: a write-only caller's "run this in bash" would run with the
// terminal authority of whoever started the turn. The ceiling is applied
// first, so a loop that starts after the check carries it, and a running
// loop means refusal (retryable: the turn ends). A caller with both write
// and terminal has the widest ceiling a worker can have: nothing it queues
// can run with more.
func (c *call) refuseBusyNarrowing(ctx context.Context, s ocSession, ceiling []Rule) (narrowed bool, err error) {
	if c.auth.Write && c.auth.Terminal {
		return false, nil
	}
	body := map[string]any{"permission": ceiling}
	if err := c.client().do(ctx, http.MethodPatch, query("/session/"+s.ID, "directory", s.Directory), body, nil); err != nil {
		return false, err
	}
	busy, err := c.busy(ctx, s)
	if err != nil {
		return true, err
	}
	if busy {
		return true, &plugin.Error{Code: CodeWorkerBusy, Retryable: true,
			Detail: "worker " + s.ID + " is running a turn started with more authority than this project has; a prompt queued behind it would run with that authority",
			Hint:   "wait for the turn to end (opencode_worker wait), then send the prompt again"}
	}
	return true, nil
}

// startedWorker is one worker admission.
type startedWorker struct {
	WorkerID  string `json:"workerID"`
	MessageID string `json:"messageID"`
	Workdir   string `json:"workdir"`
	Title     string `json:"title"`
	State     string `json:"state"`
	// Reconciled says an ambiguous failure was resolved by lookup.
	Reconciled bool   `json:"reconciled,omitempty"`
	Error      string `json:"error,omitempty"`
}

// startWorker creates one worker session (a child of the group, tagged,
// with the derived ceiling from birth) and admits its first prompt. The
// creation request id and the message id are chosen before anything is
// sent, so an ambiguous failure is resolved by looking them up.
func (c *call) startWorker(ctx context.Context, g ocSession, dir, dirVirtual, prompt, title, swarm string) (startedWorker, error) {
	rid := c.p.ids.next("req")
	mid := c.p.ids.next("msg")
	if title == "" {
		title = trimTitle(prompt)
	}
	out := startedWorker{MessageID: mid, Workdir: dirVirtual, Title: title}
	m := meta{Kind: "worker", Request: rid, Swarm: swarm, Label: title, Turns: []string{mid}}
	body := map[string]any{
		"parentID":   g.ID,
		"title":      workerPrefix + title,
		"metadata":   map[string]any{metaKey: m},
		"permission": Ceiling(c.auth, c.p.cfg.AllowNested),
	}
	if c.a.Agent != "" {
		body["agent"] = c.a.Agent
	}
	if c.a.Model != "" {
		pid, mdl := modelRef(c.a.Model)
		body["model"] = map[string]any{"id": mdl, "providerID": pid}
	}
	var s ocSession
	err := c.client().do(ctx, http.MethodPost, query("/session", "directory", dir), body, &s)
	if err != nil {
		if !ambiguous(err) {
			return out, err
		}
		found, ferr := c.findByRequest(ctx, g, rid)
		if ferr != nil || found.ID == "" {
			return out, &plugin.Error{Code: CodeAmbiguous, Retryable: true,
				Detail: "OpenCode may or may not have created the worker: " + errString(err),
				Hint:   "list workers (opencode_worker list) before starting another"}
		}
		s, out.Reconciled = found, true
	}
	c.p.track(s)
	out.WorkerID = s.ID
	ad, err := c.admit(ctx, s, mid, prompt, c.a.Agent, c.a.Model)
	if err != nil {
		return out, err
	}
	out.State = ad.State
	out.Reconciled = out.Reconciled || ad.Reconciled
	return out, nil
}

// findByRequest looks a worker up by its creation request id.
func (c *call) findByRequest(ctx context.Context, g ocSession, rid string) (ocSession, error) {
	var kids []ocSession
	if err := c.client().do(ctx, http.MethodGet, "/session/"+g.ID+"/children", nil, &kids); err != nil {
		return ocSession{}, err
	}
	for _, k := range kids {
		if m, ok := sessionMeta(k); ok && m.Request == rid {
			return k, nil
		}
	}
	return ocSession{}, nil
}

func (c *call) worker(ctx context.Context) (any, error) {
	a := c.a
	if strings.HasPrefix(a.Action, "swarm_") {
		return c.swarm(ctx)
	}
	switch a.Action {
	case "list":
		ss, wds, _, err := c.listWorkers(ctx)
		if err != nil {
			return nil, err
		}
		st, err := c.statuses(ctx, c.scope.Root())
		if err != nil {
			return nil, err
		}
		limit := a.Limit
		if limit == 0 {
			limit = defaultListLimit
		}
		out := []sessionView{}
		for i, s := range ss {
			if i == limit {
				break
			}
			out = append(out, c.view(s, wds[i], st))
		}
		return map[string]any{"action": "list", "workers": out, "total": len(ss), "maxWorkers": c.p.cfg.MaxWorkers}, nil
	case "start":
		if strings.TrimSpace(a.Prompt) == "" {
			return nil, missing(a.Action, "prompt")
		}
		wd, err := c.workdir()
		if err != nil {
			return nil, err
		}
		release, err := c.admitWorkers(ctx, 1)
		if err != nil {
			return nil, err
		}
		defer release()
		g, err := c.group(ctx)
		if err != nil {
			return nil, err
		}
		w, err := c.startWorker(ctx, g, wd.Host, wd.Virtual, a.Prompt, a.Title, "")
		if err != nil {
			return nil, err
		}
		return map[string]any{"action": "start", "worker": w, "ceiling": viewCeiling(c.auth, c.p.cfg.AllowNested)}, nil
	}
	if a.WorkerID == "" {
		return nil, missing(a.Action, "workerID")
	}
	s, wd, m, err := c.getWorker(ctx, a.WorkerID)
	if err != nil {
		return nil, err
	}
	last := ""
	if len(m.Turns) > 0 {
		last = m.Turns[len(m.Turns)-1]
	}
	switch a.Action {
	case "get":
		st, err := c.statuses(ctx, s.Directory)
		if err != nil {
			return nil, err
		}
		out := map[string]any{"action": "get", "worker": c.view(s, wd, st), "turns": m.Turns}
		if last != "" {
			r, err := c.turnState(ctx, s, last)
			if err != nil {
				return nil, err
			}
			out["lastTurn"] = r
		}
		return out, nil
	case "wait", "result":
		mid := a.MessageID
		if mid == "" {
			mid = last
		}
		if mid == "" {
			return nil, missing(a.Action, "messageID (the worker has no turn yet)")
		}
		if !containsStr(m.Turns, mid) {
			return nil, plugin.Errorf(CodeNotFound, false, "message %s is not a turn geturl admitted to worker %s", mid, s.ID)
		}
		var r waitResult
		if a.Action == "wait" {
			r, err = c.waitTurn(ctx, s, mid, c.timeout(defaultWorkWait))
		} else {
			r, err = c.turnState(ctx, s, mid)
		}
		if err != nil {
			return nil, err
		}
		return map[string]any{"action": a.Action, "workerID": s.ID, "result": r}, nil
	case "continue":
		if strings.TrimSpace(a.Prompt) == "" {
			return nil, missing(a.Action, "prompt")
		}
		release, err := c.admitWorkers(ctx, 1, s.ID)
		if err != nil {
			return nil, err
		}
		defer release()
		mid := c.p.ids.next("msg")
		if s, err = c.recordTurn(ctx, s, mid); err != nil {
			return nil, err
		}
		ad, err := c.admit(ctx, s, mid, a.Prompt, a.Agent, a.Model)
		if err != nil {
			return nil, err
		}
		return map[string]any{"action": "continue", "workerID": s.ID, "admitted": ad}, nil
	case "cancel":
		if err := c.client().do(ctx, http.MethodPost, query("/session/"+s.ID+"/abort", "directory", s.Directory), nil, nil); err != nil {
			return nil, err
		}
		return map[string]any{"action": "cancel", "workerID": s.ID, "cancelled": true}, nil
	}
	return nil, plugin.Errorf(CodeUnknownAction, false, "unhandled action %q", a.Action)
}

func containsStr(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func sortNewest3(ss []ocSession, wds []string, ms []meta) {
	for i := 1; i < len(ss); i++ {
		for j := i; j > 0 && ss[j].Time.Created > ss[j-1].Time.Created; j-- {
			ss[j], ss[j-1] = ss[j-1], ss[j]
			wds[j], wds[j-1] = wds[j-1], wds[j]
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}
