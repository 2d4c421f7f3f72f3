package opencode

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/hubdev/hub/geturl/plugin"
)

const (
	defaultListLimit = 50
	defaultMessages  = 20
	maxMessageText   = 2 << 10
	defaultTurnWait  = 20 * time.Second
	resumePrompt     = "Continue."
)

// messageView is one message, compact.
type messageView struct {
	ID        string   `json:"id"`
	Role      string   `json:"role"`
	ParentID  string   `json:"parentID,omitempty"`
	Agent     string   `json:"agent,omitempty"`
	Model     string   `json:"model,omitempty"`
	Finish    string   `json:"finish,omitempty"`
	Completed bool     `json:"completed,omitempty"`
	Error     string   `json:"error,omitempty"`
	Text      string   `json:"text,omitempty"`
	Truncated bool     `json:"truncated,omitempty"`
	Tools     []string `json:"tools,omitempty"`
	Created   int64    `json:"created"`
}

func viewMessage(m ocMessage) messageView {
	v := messageView{ID: m.Info.ID, Role: m.Info.Role, ParentID: m.Info.ParentID, Agent: m.Info.Agent,
		Finish: m.Info.Finish, Completed: m.Info.Time.Completed > 0, Created: m.Info.Time.Created}
	if m.Info.ProviderID != "" {
		v.Model = m.Info.ProviderID + "/" + m.Info.ModelID
	}
	if m.Info.Error != nil {
		v.Error = m.Info.Error.Name
	}
	var b strings.Builder
	for _, p := range m.Parts {
		switch {
		case p.Type == "text" && !p.Synthetic:
			b.WriteString(p.Text)
		case p.Type == "tool":
			st := ""
			if p.State != nil {
				st = p.State.Status
			}
			v.Tools = append(v.Tools, p.Tool+":"+st)
		}
	}
	v.Text = b.String()
	if len(v.Text) > maxMessageText {
		v.Text, v.Truncated = cutUTF8(v.Text, maxMessageText), true
	}
	return v
}

func (c *call) session(ctx context.Context) (any, error) {
	a := c.a
	if a.Action != "list" && a.SessionID == "" {
		return nil, missing(a.Action, "sessionID")
	}
	switch a.Action {
	case "list":
		wd, err := c.workdir()
		if err != nil {
			return nil, err
		}
		ss, wds, err := c.listSessions(ctx, wd.Host, false)
		if err != nil {
			return nil, err
		}
		st, err := c.statuses(ctx, wd.Host)
		if err != nil {
			return nil, err
		}
		sortNewest(ss, wds)
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
		return map[string]any{"action": "list", "workdir": wd.Virtual, "sessions": out, "total": len(ss)}, nil
	}
	s, wd, err := c.getSession(ctx, a.SessionID)
	if err != nil {
		return nil, err
	}
	_, ours := sessionMeta(s)
	switch a.Action {
	case "get":
		st, err := c.statuses(ctx, s.Directory)
		if err != nil {
			return nil, err
		}
		return map[string]any{"action": "get", "session": c.view(s, wd, st)}, nil
	case "messages":
		return c.sessionMessages(ctx, s)
	case "children":
		var kids []ocSession
		if err := c.client().do(ctx, http.MethodGet, "/session/"+s.ID+"/children", nil, &kids); err != nil {
			return nil, err
		}
		st, err := c.statuses(ctx, s.Directory)
		if err != nil {
			return nil, err
		}
		out := []sessionView{}
		for _, k := range kids {
			if kwd, ok := c.visible(k); ok {
				out = append(out, c.view(k, kwd, st))
			}
		}
		return map[string]any{"action": "children", "sessionID": s.ID, "children": out}, nil
	case "selection":
		return c.selection(s), nil
	case "pause":
		// OpenCode's interrupt stops the running loop and keeps the
		// session; a later resume continues it. Always allowed: stopping
		// is a safety action.
		if err := c.client().do(ctx, http.MethodPost, "/api/session/"+s.ID+"/interrupt", nil, nil); err != nil {
			return nil, err
		}
		return map[string]any{"action": "pause", "sessionID": s.ID, "paused": true}, nil
	case "abort":
		if err := c.client().do(ctx, http.MethodPost, query("/session/"+s.ID+"/abort", "directory", s.Directory), nil, nil); err != nil {
			return nil, err
		}
		return map[string]any{"action": "abort", "sessionID": s.ID, "aborted": true}, nil
	}
	// Everything left executes through the session.
	if err := c.mayExecute(s, ours, a.Action); err != nil {
		return nil, err
	}
	switch a.Action {
	case "set_selection":
		if a.Agent == "" && a.Model == "" {
			return nil, missing(a.Action, "agent and/or model")
		}
		if a.Agent != "" {
			if err := c.client().do(ctx, http.MethodPost, "/api/session/"+s.ID+"/agent", map[string]any{"agent": a.Agent}, nil); err != nil {
				return nil, err
			}
		}
		if a.Model != "" {
			pid, mdl := modelRef(a.Model)
			ref := map[string]any{"id": mdl, "providerID": pid}
			if a.Variant != "" {
				ref["variant"] = a.Variant
			}
			if err := c.client().do(ctx, http.MethodPost, "/api/session/"+s.ID+"/model", map[string]any{"model": ref}, nil); err != nil {
				return nil, err
			}
		}
		s, _, err = c.getSession(ctx, s.ID)
		if err != nil {
			return nil, err
		}
		return c.selection(s), nil
	case "background_subagents":
		if err := c.client().do(ctx, http.MethodPost, query("/experimental/session/"+s.ID+"/background", "directory", s.Directory), nil, nil); err != nil {
			return nil, err
		}
		return map[string]any{"action": a.Action, "sessionID": s.ID, "backgrounded": true}, nil
	case "send", "turn", "resume":
		text := a.Prompt
		if a.Action == "resume" && text == "" {
			text = resumePrompt
		}
		if strings.TrimSpace(text) == "" {
			return nil, missing(a.Action, "prompt")
		}
		mid := c.p.ids.next("msg")
		if ours {
			// A geturl worker gets this caller's ceiling before it runs
			// anything for this caller.
			if _, err := c.recordTurn(ctx, s, mid); err != nil {
				return nil, err
			}
		}
		ad, err := c.admit(ctx, s, mid, text, a.Agent, a.Model)
		if err != nil {
			return nil, err
		}
		if a.Action != "turn" {
			return map[string]any{"action": a.Action, "admitted": ad}, nil
		}
		w, err := c.waitTurn(ctx, s, mid, c.timeout(defaultTurnWait))
		if err != nil {
			return nil, err
		}
		return map[string]any{"action": "turn", "admitted": ad, "turn": w}, nil
	}
	return nil, plugin.Errorf(CodeUnknownAction, false, "unhandled action %q", a.Action)
}

// mayExecute applies the existing-session rules: a session geturl did not
// create keeps its own OpenCode permissions, so driving it needs
// allow_existing plus both write and terminal.
func (c *call) mayExecute(s ocSession, ours bool, action string) error {
	if ours {
		return nil
	}
	if !c.p.cfg.AllowExisting {
		return &plugin.Error{Code: CodeForbidden, Detail: action + " on an existing session is disabled (GETMCP_OPENCODE_ALLOW_EXISTING=false)"}
	}
	return c.needWriteTerminal(action + " on an existing session")
}

func (c *call) selection(s ocSession) map[string]any {
	out := map[string]any{"action": c.a.Action, "sessionID": s.ID, "agent": s.Agent}
	if s.Model != nil {
		out["model"] = s.Model.ProviderID + "/" + s.Model.ID
		if s.Model.Variant != "" {
			out["variant"] = s.Model.Variant
		}
	}
	return out
}

func (c *call) sessionMessages(ctx context.Context, s ocSession) (any, error) {
	if c.a.MessageID != "" {
		// Exact correlation of one turn.
		r, err := c.turnState(ctx, s, c.a.MessageID)
		if err != nil {
			return nil, err
		}
		return map[string]any{"action": "messages", "sessionID": s.ID, "turn": r}, nil
	}
	limit := c.a.Limit
	if limit == 0 {
		limit = defaultMessages
	}
	if limit > maxMessages {
		limit = maxMessages
	}
	msgs, err := c.messages(ctx, s.ID, limit)
	if err != nil {
		return nil, err
	}
	out := make([]messageView, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, viewMessage(m))
	}
	return map[string]any{"action": "messages", "sessionID": s.ID, "messages": out}, nil
}
