package opencode

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/hubdev/hub/geturl/plugin"
)

// pendingWalls are the permission and question requests OpenCode is
// waiting on for visible sessions.
type pendingWalls struct {
	Permissions []permissionView `json:"permissions"`
	Questions   []questionView   `json:"questions"`
}

type permissionView struct {
	RequestID  string   `json:"requestID"`
	SessionID  string   `json:"sessionID"`
	Permission string   `json:"permission"`
	Patterns   []string `json:"patterns"`
	Always     []string `json:"always,omitempty"`
	MessageID  string   `json:"messageID,omitempty"`
	// Approvable says whether this caller's authority lets it answer
	// once/always (reject is always possible).
	Approvable bool `json:"approvable"`
}

type questionView struct {
	RequestID string           `json:"requestID"`
	SessionID string           `json:"sessionID"`
	Questions []questionDetail `json:"questions"`
}

type questionDetail struct {
	Question string   `json:"question"`
	Header   string   `json:"header,omitempty"`
	Multiple bool     `json:"multiple,omitempty"`
	Options  []string `json:"options"`
}

// walls lists pending requests of the directory's OpenCode instance for
// sessions that are visible to this call (only ids in only, when not nil).
func (c *call) walls(ctx context.Context, dirHost string, only map[string]bool) (pendingWalls, error) {
	out := pendingWalls{Permissions: []permissionView{}, Questions: []questionView{}}
	var perms []ocPermissionRequest
	if err := c.client().do(ctx, http.MethodGet, query("/permission", "directory", dirHost), nil, &perms); err != nil {
		return out, err
	}
	var qs []ocQuestionRequest
	if err := c.client().do(ctx, http.MethodGet, query("/question", "directory", dirHost), nil, &qs); err != nil {
		return out, err
	}
	seen := map[string]bool{}
	ok := func(sid string) bool {
		if only != nil {
			return only[sid]
		}
		if v, done := seen[sid]; done {
			return v
		}
		_, _, err := c.getSession(ctx, sid)
		seen[sid] = err == nil
		return seen[sid]
	}
	for _, p := range perms {
		if !ok(p.SessionID) {
			continue
		}
		v := permissionView{RequestID: p.ID, SessionID: p.SessionID, Permission: p.Permission, Patterns: p.Patterns,
			Always: p.Always, Approvable: c.mayApprove(p.Permission) == nil}
		if p.Tool != nil {
			v.MessageID = p.Tool.MessageID
		}
		out.Permissions = append(out.Permissions, v)
	}
	for _, q := range qs {
		if !ok(q.SessionID) {
			continue
		}
		v := questionView{RequestID: q.ID, SessionID: q.SessionID}
		for _, d := range q.Questions {
			qd := questionDetail{Question: d.Question, Header: d.Header, Multiple: d.Multiple, Options: []string{}}
			for _, o := range d.Options {
				qd.Options = append(qd.Options, o.Label)
			}
			v.Questions = append(v.Questions, qd)
		}
		out.Questions = append(out.Questions, v)
	}
	return out, nil
}

// mayApprove says whether this caller may grant an OpenCode permission:
// granting one is exercising it. Edits need write and terminal (as a
// worker's edits do, see Ceiling: OpenCode's edits bypass geturl's file
// checks), the shell needs terminal, and external directories are never
// granted through geturl.
func (c *call) mayApprove(permission string) error {
	switch {
	case permission == "external_directory" || strings.HasPrefix(permission, "swarm_"):
		return &plugin.Error{Code: CodeForbidden, Detail: permission + " is outside what geturl can grant; reject it"}
	case slices.Contains(editPermissions, permission) || strings.HasPrefix(permission, "refactor"):
		if !c.auth.Write || !c.auth.Terminal {
			return &plugin.Error{Code: CodeForbidden, Detail: "granting " + permission + " needs both write and terminal permission on this project",
				Hint: "OpenCode's edits follow symlinks and bypass geturl's file checks (version-control metadata, the project root); edit with geturl's own file tools, or reject"}
		}
	case permission == "bash":
		if !c.auth.Terminal {
			return &plugin.Error{Code: CodeForbidden, Detail: "granting bash needs terminal permission on this project"}
		}
	}
	return nil
}

func (c *call) request(ctx context.Context) (any, error) {
	a := c.a
	if a.Action == "list" {
		wd, err := c.workdir()
		if err != nil {
			return nil, err
		}
		var only map[string]bool
		if a.SessionID != "" {
			if _, _, err := c.getSession(ctx, a.SessionID); err != nil {
				return nil, err
			}
			only = map[string]bool{a.SessionID: true}
		}
		w, err := c.walls(ctx, wd.Host, only)
		if err != nil {
			return nil, err
		}
		return map[string]any{"action": "list", "permissions": w.Permissions, "questions": w.Questions}, nil
	}
	if a.RequestID == "" {
		return nil, missing(a.Action, "requestID")
	}
	isPerm := strings.HasPrefix(a.RequestID, "per_")
	if isPerm != (a.Action == "reply_permission") {
		return nil, badArgs("requestID %s does not fit action %s (per_ ids are permissions, que_ ids questions)", a.RequestID, a.Action)
	}
	// The request is looked up in the root's listing, which also proves
	// its session is inside the root.
	w, err := c.walls(ctx, c.scope.Root(), nil)
	if err != nil {
		return nil, err
	}
	switch a.Action {
	case "reply_permission":
		if a.Reply == "" {
			return nil, missing(a.Action, "reply (once, always or reject)")
		}
		i := slices.IndexFunc(w.Permissions, func(p permissionView) bool { return p.RequestID == a.RequestID })
		if i < 0 {
			return nil, plugin.Errorf(CodeNotFound, false, "no pending permission request %s for a session in this project", a.RequestID)
		}
		if a.Reply != "reject" {
			if err := c.mayApprove(w.Permissions[i].Permission); err != nil {
				return nil, err
			}
		}
		body := map[string]any{"reply": a.Reply}
		if a.Message != "" {
			body["message"] = a.Message
		}
		if err := c.client().do(ctx, http.MethodPost, "/permission/"+a.RequestID+"/reply", body, nil); err != nil {
			return nil, err
		}
		return map[string]any{"action": a.Action, "requestID": a.RequestID, "sessionID": w.Permissions[i].SessionID, "reply": a.Reply}, nil
	default:
		i := slices.IndexFunc(w.Questions, func(q questionView) bool { return q.RequestID == a.RequestID })
		if i < 0 {
			return nil, plugin.Errorf(CodeNotFound, false, "no pending question %s for a session in this project", a.RequestID)
		}
		q := w.Questions[i]
		if a.Action == "reject_question" {
			if err := c.client().do(ctx, http.MethodPost, "/question/"+a.RequestID+"/reject", nil, nil); err != nil {
				return nil, err
			}
			return map[string]any{"action": a.Action, "requestID": a.RequestID, "sessionID": q.SessionID, "rejected": true}, nil
		}
		if len(a.Answers) != len(q.Questions) {
			return nil, badArgs("answers holds %d answers for %d questions (one array of labels per question)", len(a.Answers), len(q.Questions))
		}
		if err := c.client().do(ctx, http.MethodPost, "/question/"+a.RequestID+"/reply", map[string]any{"answers": a.Answers}, nil); err != nil {
			return nil, err
		}
		return map[string]any{"action": a.Action, "requestID": a.RequestID, "sessionID": q.SessionID, "answered": true}, nil
	}
}
