package adapters

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"unicode"
)

// A ToolBridge is a bridge's attached page seen as a set of tools that
// another adapter of the same hub calls in-process: geturl offers each
// running bridge's as a /k plugin. The bridge keeps its own rules (one
// command at a time per Stitch Slop tab, pixelle's relay routing, aiui's
// directory routing); the caller only learns the tools, how each call is
// classified, and the answer.
//
// The stitchslop, pixelle and aiui adapters implement it on their *Server;
// a caller reaches a running one through HubView.Bridge, never by
// importing the protocol package.
type ToolBridge interface {
	// BridgeTools lists what the page offers now. It fails with an error
	// wrapping ErrNoPage while no page is attached.
	BridgeTools() ([]BridgeTool, error)
	// BridgeClassify decides, before anything runs, whether a call of
	// tool with args only reads (true) or may change the page (false).
	// It refuses, with a *ToolError, a call that cannot run now: no page
	// (wrapping ErrNoPage), an unknown tool, arguments the bridge can tell
	// are wrong. When in doubt it says "mutation": a read journaled as a
	// mutation is harmless, a mutation run twice is not.
	BridgeClassify(tool string, args json.RawMessage) (read bool, err error)
	// BridgeCall runs one call and returns the page's answer as JSON. A
	// failure is a *ToolError carrying the bridge's code; one that leaves
	// the outcome unknown (the page went away mid-call) says so in its
	// code, e.g. OUTCOME_UNKNOWN.
	BridgeCall(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error)
}

// BridgeTool is one tool of a page, as a ToolBridge lists it.
type BridgeTool struct {
	Name        string
	Description string
	InputSchema json.RawMessage // a JSON Schema object; nil when the page gave none
	// Read: every call of the tool only reads. Per-call classification is
	// BridgeClassify's.
	Read bool
}

// ErrNoPage is wrapped by every ToolBridge error that means no page is
// attached, so callers can tell "come back later" from a failed call.
var ErrNoPage = errors.New("no page is attached")

// CodeBrowserOffline is the code of a ToolBridge's no-page error, the same
// for every bridge (pixelle's relay already names it so), so an agent
// learns one code for "the page is not there".
const CodeBrowserOffline = "BROWSER_OFFLINE"

// CodeNotRunning is the code of a ToolBridge error that means the bridge
// itself cannot be reached: it is starting, restarting or stopped, or the
// process that ran it is gone.
const CodeNotRunning = "bridge_not_running"

// NotRunning is the error a ToolBridge answers while the bridge it drives
// cannot be reached.
func NotRunning(message string) *ToolError {
	return &ToolError{Code: CodeNotRunning, Message: message, Retryable: true,
		Hint: "retry shortly; hub status shows the bridge's state and last error"}
}

// ToolError is a ToolBridge's structured failure: a code the agent can
// act on, a message, what to do next, and whether the same call may
// succeed later unchanged.
type ToolError struct {
	Code      string
	Message   string
	Hint      string
	Retryable bool
	// Err is the cause, for errors.Is (ErrNoPage for an absent page).
	Err error
}

func (e *ToolError) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Code + ": " + e.Message
}

func (e *ToolError) Unwrap() error { return e.Err }

// NoPage is the error a ToolBridge answers while no page is attached.
func NoPage(message, hint string) *ToolError {
	return &ToolError{Code: CodeBrowserOffline, Message: message, Hint: hint, Retryable: true, Err: ErrNoPage}
}

// ReadOnlyTool classifies a page tool the bridge knows nothing else about.
// When the page gave MCP annotations with a boolean readOnlyHint, that
// decides. Otherwise the name does, conservatively: the name's action is
// what follows its last '.', '/' or ':' (all of it when there is none),
// split into words at '_', '-', spaces and camelCase humps; the tool reads
// when the first or the last word of the action is a read verb (get, read,
// list, describe, …) and no word of the whole name is a write verb (set,
// delete, save, …). Every other name, including ones the rule has never
// seen, is a mutation: journaling a read costs a replayed answer, running
// a mutation twice may cost the user's work.
func ReadOnlyTool(name string, annotations json.RawMessage) bool {
	var a struct {
		ReadOnlyHint *bool `json:"readOnlyHint"`
	}
	if len(annotations) > 0 && json.Unmarshal(annotations, &a) == nil && a.ReadOnlyHint != nil {
		return *a.ReadOnlyHint
	}
	for _, w := range words(name) {
		if writeVerbs[w] {
			return false
		}
	}
	action := name
	if i := strings.LastIndexAny(name, "./:"); i >= 0 {
		action = name[i+1:]
	}
	ws := words(action)
	return len(ws) > 0 && (readVerbs[ws[0]] || readVerbs[ws[len(ws)-1]])
}

// readVerbs are the words that make an action a read. Ambiguous ones
// (check, export, fetch, open) are left out on purpose.
var readVerbs = set("get", "read", "list", "describe", "show", "query", "find", "search", "inspect", "status",
	"info", "view", "peek", "count", "preview", "render", "screenshot", "snapshot")

// writeVerbs veto a read anywhere in a name ("get_and_set"). Words that
// are often nouns (type, post, run, open) are left out.
var writeVerbs = set("set", "put", "create", "add", "insert", "update", "upsert", "patch", "edit", "write",
	"save", "delete", "remove", "clear", "reset", "apply", "move", "rename", "replace", "exec", "execute",
	"submit", "toggle", "click", "press", "import", "undo", "redo", "commit", "push", "drop", "destroy",
	"kill", "send")

func set(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// words splits a name into lower-case words at non-alphanumerics and at
// camelCase humps ("getSceneInfo" → get scene info, "HTMLNode" → html node).
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			continue
		case unicode.IsUpper(r) && len(cur) > 0:
			prevLower := unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || (unicode.IsUpper(rs[i-1]) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return out
}
