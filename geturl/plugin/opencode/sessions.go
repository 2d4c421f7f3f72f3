package opencode

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/hubdev/hub/geturl/plugin"
)

// sessionView is a session as the agent sees it: the directory in its
// /project form, and whether geturl owns it.
type sessionView struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Workdir  string   `json:"workdir"`
	ParentID string   `json:"parentID,omitempty"`
	Owner    string   `json:"owner"` // "geturl" or "external"
	Kind     string   `json:"kind,omitempty"`
	Swarm    string   `json:"swarmID,omitempty"`
	Status   string   `json:"status,omitempty"`
	Agent    string   `json:"agent,omitempty"`
	Model    string   `json:"model,omitempty"`
	Created  int64    `json:"created"`
	Updated  int64    `json:"updated"`
	Cost     float64  `json:"cost,omitempty"`
	Tokens   ocTokens `json:"tokens"`
	Turns    int      `json:"turns,omitempty"`
	LastTurn string   `json:"lastMessageID,omitempty"`
}

func (c *call) view(s ocSession, workdir string, status map[string]ocStatus) sessionView {
	v := sessionView{ID: s.ID, Title: s.Title, Workdir: workdir, ParentID: s.ParentID, Owner: "external",
		Agent: s.Agent, Created: s.Time.Created, Updated: s.Time.Updated, Cost: s.Cost, Tokens: s.Tokens}
	if s.Model != nil {
		v.Model = s.Model.ProviderID + "/" + s.Model.ID
	}
	if m, ok := sessionMeta(s); ok {
		v.Owner, v.Kind, v.Swarm, v.Turns = "geturl", m.Kind, m.Swarm, len(m.Turns)
		if len(m.Turns) > 0 {
			v.LastTurn = m.Turns[len(m.Turns)-1]
		}
	}
	if status != nil {
		v.Status = "idle"
		if st, ok := status[s.ID]; ok {
			v.Status = st.Type
		}
	}
	return v
}

// getSession fetches one session and refuses it unless its canonical
// working directory is inside the root.
func (c *call) getSession(ctx context.Context, id string) (ocSession, string, error) {
	var s ocSession
	if err := c.client().do(ctx, http.MethodGet, "/session/"+id, nil, &s); err != nil {
		return s, "", err
	}
	wd, ok := c.visible(s)
	if !ok {
		return s, "", &plugin.Error{Code: CodeOutsideRoot, Detail: "session " + id + " works outside this project's root"}
	}
	return s, wd, nil
}

// listSessions lists the sessions OpenCode holds for the directory's
// project, keeping the visible ones (inside under, a host path).
func (c *call) listSessions(ctx context.Context, dirHost string, roots bool) ([]ocSession, []string, error) {
	q := query("/session", "directory", dirHost)
	if roots {
		q = query("/session", "directory", dirHost, "roots", "true")
	}
	var all []ocSession
	if err := c.client().do(ctx, http.MethodGet, q, nil, &all); err != nil {
		return nil, nil, err
	}
	under := c.scope.Virtual(dirHost)
	var out []ocSession
	var wds []string
	for _, s := range all {
		wd, ok := c.visible(s)
		if !ok || !(under == "/project" || wd == under || len(wd) > len(under) && wd[:len(under)+1] == under+"/") {
			continue
		}
		out = append(out, s)
		wds = append(wds, wd)
	}
	return out, wds, nil
}

// statuses returns the busy/retry sessions of the root's OpenCode
// instance; an absent id is idle.
func (c *call) statuses(ctx context.Context, dirHost string) (map[string]ocStatus, error) {
	st := map[string]ocStatus{}
	err := c.client().do(ctx, http.MethodGet, query("/session/status", "directory", dirHost), nil, &st)
	return st, err
}

func (c *call) busy(ctx context.Context, s ocSession) (bool, error) {
	st, err := c.statuses(ctx, s.Directory)
	if err != nil {
		return false, err
	}
	t, ok := st[s.ID]
	return ok && t.Type != "idle", nil
}

func (c *call) messages(ctx context.Context, id string, limit int) ([]ocMessage, error) {
	var msgs []ocMessage
	path := "/session/" + id + "/message"
	if limit > 0 {
		path = query(path, "limit", strconv.Itoa(limit))
	}
	err := c.client().do(ctx, http.MethodGet, path, nil, &msgs)
	return msgs, err
}

// admitted is the answer to a prompt admission.
type admitted struct {
	SessionID string `json:"sessionID"`
	MessageID string `json:"messageID"`
	State     string `json:"state"`
	// Reconciled says an ambiguous failure was resolved by looking the
	// message up rather than sending it again.
	Reconciled bool `json:"reconciled,omitempty"`
}

// admit sends text to session s as user message mid (chosen by the
// caller, so it is known before the request leaves). OpenCode does not
// deduplicate a re-sent message id (it appends the parts again), so an
// ambiguous failure is reconciled by looking the message up: found means
// admitted; not found after the send has settled means it is safe to send
// once more.
func (c *call) admit(ctx context.Context, s ocSession, mid, text, agent, model string) (admitted, error) {
	body := map[string]any{"messageID": mid, "parts": []any{map[string]any{"type": "text", "text": text}}}
	if agent != "" {
		body["agent"] = agent
	}
	if model != "" {
		pid, mdl := modelRef(model)
		body["model"] = map[string]any{"providerID": pid, "modelID": mdl}
	}
	path := query("/session/"+s.ID+"/prompt_async", "directory", s.Directory)
	out := admitted{SessionID: s.ID, MessageID: mid, State: "admitted"}
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		err = c.client().do(ctx, http.MethodPost, path, body, nil)
		if err == nil || !ambiguous(err) {
			return out, err
		}
		found, lerr := c.lookupMessage(ctx, s.ID, mid)
		if lerr != nil {
			break
		}
		if found {
			out.Reconciled = true
			return out, nil
		}
	}
	return out, &plugin.Error{Code: CodeAmbiguous, Retryable: true,
		Detail: "OpenCode may or may not have admitted message " + mid + ": " + errString(err),
		Hint:   "look the turn up with action result/messages and messageID " + mid + " before sending again"}
}

// lookupMessage reports whether message mid exists, polling briefly so a
// request still in flight inside OpenCode can land first.
func (c *call) lookupMessage(ctx context.Context, sid, mid string) (bool, error) {
	for i := 0; i < 3; i++ {
		err := c.client().do(ctx, http.MethodGet, "/session/"+sid+"/message/"+mid, nil, nil)
		if err == nil {
			return true, nil
		}
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != http.StatusNotFound {
			return false, err
		}
		if err := c.p.sleep(ctx, c.p.poll); err != nil {
			return false, err
		}
	}
	return false, nil
}

// ambiguous says whether a failed request may still have taken effect: a
// transport failure or a server error, not a clean refusal.
func ambiguous(err error) bool {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Status >= 500
	}
	var pe *plugin.Error
	if errors.As(err, &pe) || errors.Is(err, ErrInstanceChanged) || errors.Is(err, errNeedsAuth) {
		return false
	}
	return true
}

func errString(err error) string {
	if err == nil {
		return "unknown"
	}
	return err.Error()
}

// waitResult is a turn's state after waiting, with any wall that blocks it.
type waitResult struct {
	TurnResult
	SessionID string        `json:"sessionID"`
	Done      bool          `json:"done"`
	Blocked   *pendingWalls `json:"blocked,omitempty"`
	Waited    int64         `json:"waitedMs"`
}

func (w waitResult) terminal() bool {
	switch w.State {
	case TurnCompleted, TurnError, TurnAborted:
		return true
	}
	return false
}

// waitTurn polls session s until the turn of mid ends, a permission or
// question wall blocks it, or timeout passes (deadline by the injected
// clock).
func (c *call) waitTurn(ctx context.Context, s ocSession, mid string, timeout time.Duration) (waitResult, error) {
	start := c.p.now()
	for {
		r, err := c.turnState(ctx, s, mid)
		if err != nil {
			return r, err
		}
		r.Waited = c.p.now().Sub(start).Milliseconds()
		if r.Done || r.Blocked != nil || c.p.now().Sub(start) >= timeout {
			return r, nil
		}
		if err := c.p.sleep(ctx, c.p.poll); err != nil {
			return r, err
		}
	}
}

// turnState is one look at the turn of mid.
func (c *call) turnState(ctx context.Context, s ocSession, mid string) (waitResult, error) {
	busy, err := c.busy(ctx, s)
	if err != nil {
		return waitResult{}, err
	}
	msgs, err := c.messages(ctx, s.ID, 0)
	if err != nil {
		return waitResult{}, err
	}
	r := waitResult{TurnResult: Correlate(msgs, mid, busy), SessionID: s.ID}
	r.Done = r.terminal()
	if !r.Done {
		walls, err := c.walls(ctx, s.Directory, map[string]bool{s.ID: true})
		if err != nil {
			return r, err
		}
		if len(walls.Permissions)+len(walls.Questions) > 0 {
			r.Blocked = &walls
		}
	}
	return r, nil
}

func (c *call) timeout(def time.Duration) time.Duration {
	if c.a.TimeoutMs > 0 {
		return time.Duration(c.a.TimeoutMs) * time.Millisecond
	}
	return def
}

func sortNewest(ss []ocSession, wds []string) {
	idx := make([]int, len(ss))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ss[idx[a]].Time.Updated > ss[idx[b]].Time.Updated })
	s2, w2 := make([]ocSession, len(ss)), make([]string, len(ss))
	for i, j := range idx {
		s2[i], w2[i] = ss[j], wds[j]
	}
	copy(ss, s2)
	copy(wds, w2)
}
