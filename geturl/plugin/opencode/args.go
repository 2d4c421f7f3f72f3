package opencode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hubdev/hub/geturl/plugin"
)

// Argument limits.
const (
	maxPromptBytes = 64 << 10
	maxTitleBytes  = 200
	maxTimeoutMs   = 60_000
	maxListLimit   = 200
	maxMessages    = 100
	maxAnswers     = 16
)

// Tool names.
const (
	ToolInfo    = "opencode_info"
	ToolSession = "opencode_session"
	ToolWorker  = "opencode_worker"
	ToolRequest = "opencode_request"
)

// actions lists each tool's read and mutation actions, exactly as the spec
// tables them.
var actions = map[string]struct{ reads, mutations []string }{
	ToolInfo:    {reads: []string{"status", "capabilities", "providers", "models", "agents", "limits", "usage"}},
	ToolSession: {reads: []string{"list", "get", "messages", "children", "selection"}, mutations: []string{"set_selection", "send", "turn", "pause", "resume", "abort", "background_subagents"}},
	ToolWorker:  {reads: []string{"list", "get", "wait", "result", "swarm_list", "swarm_get", "swarm_wait"}, mutations: []string{"start", "continue", "cancel", "swarm_start", "swarm_cancel", "swarm_continue"}},
	ToolRequest: {reads: []string{"list"}, mutations: []string{"reply_permission", "answer_question", "reject_question"}},
}

// args is the union of every tool's arguments; each tool accepts only its
// own fields (allowed), so a typo is refused rather than ignored.
type args struct {
	Action    string     `json:"action"`
	Provider  string     `json:"provider,omitempty"`
	SessionID string     `json:"sessionID,omitempty"`
	WorkerID  string     `json:"workerID,omitempty"`
	SwarmID   string     `json:"swarmID,omitempty"`
	RequestID string     `json:"requestID,omitempty"`
	MessageID string     `json:"messageID,omitempty"`
	Workdir   string     `json:"workdir,omitempty"`
	Prompt    string     `json:"prompt,omitempty"`
	Title     string     `json:"title,omitempty"`
	Agent     string     `json:"agent,omitempty"`
	Model     string     `json:"model,omitempty"`
	Variant   string     `json:"variant,omitempty"`
	Limit     int        `json:"limit,omitempty"`
	TimeoutMs int        `json:"timeoutMs,omitempty"`
	Tasks     []taskArg  `json:"tasks,omitempty"`
	Reply     string     `json:"reply,omitempty"`
	Message   string     `json:"message,omitempty"`
	Answers   [][]string `json:"answers,omitempty"`
}

type taskArg struct {
	Prompt string `json:"prompt"`
	Title  string `json:"title,omitempty"`
}

// allowed lists each tool's fields besides action.
var allowed = map[string][]string{
	ToolInfo:    {"provider"},
	ToolSession: {"sessionID", "workdir", "limit", "prompt", "messageID", "agent", "model", "variant", "timeoutMs"},
	ToolWorker:  {"workerID", "swarmID", "workdir", "prompt", "title", "agent", "model", "messageID", "timeoutMs", "tasks", "limit"},
	ToolRequest: {"requestID", "sessionID", "reply", "message", "answers"},
}

// The exact shapes of ids and names; the ids end up in OpenCode URL paths.
// Plain byte checks, not regexps: compiling the counted repetitions
// ({1,200}) cost every hub start ~700 KB.
func isSessionID(s string) bool { return isID(s, "ses_") }
func isMessageID(s string) bool { return isID(s, "msg_") }
func isSwarmID(s string) bool   { return isID(s, "swm_") }
func isRequestID(s string) bool { return isID(s, "per_") || isID(s, "que_") }

// isID: prefix, then 1..64 ASCII letters and digits.
func isID(s, prefix string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	return ok && isRun(rest, 64, isAlnum)
}

// isName: 1..128 of [0-9A-Za-z._@:-] (agent, variant, provider).
func isName(s string) bool { return isRun(s, 128, isNameByte) }

// isModel: "provider/model", a name, a slash, then 1..200 of
// [0-9A-Za-z._@:/+-].
func isModel(s string) bool {
	provider, model, ok := strings.Cut(s, "/")
	return ok && isName(provider) && isRun(model, 200, isModelByte)
}

func isRun(s string, max int, ok func(byte) bool) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := range len(s) {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isNameByte(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '@' || c == ':' || c == '-'
}

func isModelByte(c byte) bool { return isNameByte(c) || c == '/' || c == '+' }

// parseArgs decodes and checks one call's arguments: unknown tool, unknown
// field, wrong type, unknown action and malformed ids are all refused here,
// before anything runs.
func parseArgs(tool string, raw json.RawMessage) (args, bool, error) {
	spec, ok := actions[tool]
	if !ok {
		return args{}, false, plugin.Errorf(CodeUnknownTool, false, "tool %q is not one of opencode_info, opencode_session, opencode_worker, opencode_request", tool)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return args{}, false, &plugin.Error{Code: CodeMissingArgument, Detail: "arguments must be a JSON object with an action", Hint: `e.g. {"action":"` + spec.reads[0] + `"}`}
	}
	if raw[0] != '{' {
		return args{}, false, badArgs("arguments must be a JSON object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return args{}, false, badArgs("arguments are not valid JSON: %v", err)
	}
	for k := range fields {
		if k != "action" && !slices.Contains(allowed[tool], k) {
			return args{}, false, &plugin.Error{Code: CodeInvalidArguments, Detail: fmt.Sprintf("unknown field %q for %s", k, tool),
				Hint: "fields: action, " + strings.Join(allowed[tool], ", ")}
		}
	}
	var a args
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&a); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return args{}, false, badArgs("field %q: %s is the wrong type (want %s)", te.Field, te.Value, te.Type.String())
		}
		return args{}, false, badArgs("arguments: %v", err)
	}
	if a.Action == "" {
		return args{}, false, &plugin.Error{Code: CodeMissingArgument, Detail: "action is required",
			Hint: "actions: " + strings.Join(append(slices.Clone(spec.reads), spec.mutations...), ", ")}
	}
	mutation := slices.Contains(spec.mutations, a.Action)
	if !mutation && !slices.Contains(spec.reads, a.Action) {
		return args{}, false, &plugin.Error{Code: CodeUnknownAction, Detail: fmt.Sprintf("%s has no action %q", tool, a.Action),
			Hint: "actions: " + strings.Join(append(slices.Clone(spec.reads), spec.mutations...), ", ")}
	}
	return a, mutation, a.check()
}

// check validates formats and ranges of the fields that are present.
func (a args) check() error {
	for _, f := range []struct {
		name, v string
		is      func(string) bool
	}{
		{"sessionID", a.SessionID, isSessionID}, {"workerID", a.WorkerID, isSessionID},
		{"messageID", a.MessageID, isMessageID}, {"swarmID", a.SwarmID, isSwarmID},
		{"requestID", a.RequestID, isRequestID}, {"agent", a.Agent, isName},
		{"variant", a.Variant, isName}, {"model", a.Model, isModel}, {"provider", a.Provider, isName},
	} {
		// The ids end up in OpenCode URL paths, so only their exact shape
		// is accepted.
		if f.v != "" && !f.is(f.v) {
			return badArgs("field %q is malformed", f.name)
		}
	}
	switch {
	case len(a.Prompt) > maxPromptBytes:
		return badArgs("field \"prompt\" exceeds %d bytes", maxPromptBytes)
	case len(a.Title) > maxTitleBytes:
		return badArgs("field \"title\" exceeds %d bytes", maxTitleBytes)
	case a.Limit < 0 || a.Limit > maxListLimit:
		return badArgs("field \"limit\" must be 1..%d", maxListLimit)
	case a.TimeoutMs < 0 || a.TimeoutMs > maxTimeoutMs:
		return badArgs("field \"timeoutMs\" must be 0..%d", maxTimeoutMs)
	case len(a.Tasks) > MaxWorkersLimit:
		return badArgs("field \"tasks\" holds at most %d tasks", MaxWorkersLimit)
	case len(a.Answers) > maxAnswers:
		return badArgs("field \"answers\" holds at most %d answers", maxAnswers)
	case len(a.Message) > 4096:
		return badArgs("field \"message\" exceeds 4096 bytes")
	}
	for i, t := range a.Tasks {
		if strings.TrimSpace(t.Prompt) == "" {
			return badArgs("tasks[%d].prompt is required", i)
		}
		if len(t.Prompt) > maxPromptBytes || len(t.Title) > maxTitleBytes {
			return badArgs("tasks[%d] exceeds the prompt or title limit", i)
		}
	}
	if a.Reply != "" && !slices.Contains([]string{"once", "always", "reject"}, a.Reply) {
		return badArgs("field \"reply\" must be once, always or reject")
	}
	return nil
}

// modelRef splits "provider/model".
func modelRef(s string) (provider, model string) {
	provider, model, _ = strings.Cut(s, "/")
	return provider, model
}
