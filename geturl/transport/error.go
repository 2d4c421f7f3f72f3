package transport

import (
	"strings"

	"github.com/hubdev/hub/hub/jsonw"
)

// Error codes of the transport layer. They are part of the wire contract:
// agents branch on them, so they never change spelling.
const (
	CodeRequestTooLarge     = "request_too_large"
	CodeRawTooLarge         = "raw_too_large"
	CodeMalformedRequest    = "malformed_request"
	CodeUnknownParameter    = "unknown_parameter"
	CodeDuplicateParameter  = "duplicate_parameter"
	CodeConflictingParams   = "conflicting_parameters"
	CodeConflictingContent  = "conflicting_content_transports"
	CodeMissingParameter    = "missing_parameter"
	CodeEmptyParameter      = "empty_parameter"
	CodeInvalidParameter    = "invalid_parameter"
	CodeValueOutOfRange     = "value_out_of_range"
	CodeTooManyValues       = "too_many_values"
	CodeAmbiguousRange      = "ambiguous_range"
	CodeMisplacedControl    = "misplaced_control_parameter"
	CodeUnknownRoute        = "unknown_route"
	CodeWrongCapabilityBase = "wrong_capability_base"
	CodeMethodNotAllowed    = "method_not_allowed"
	CodeNotFound            = "not_found"
	CodeInternal            = "internal_error"
)

// Agent actions: what the agent should do next (the spec's agentAction).
const (
	ActionCorrectRequest  = "correct_request"
	ActionFetchRepair     = "fetch_repair"
	ActionStageContent    = "stage_content"
	ActionRereadThenRetry = "reread_then_retry"
	ActionRunForeground   = "run_foreground"
	ActionRetryLater      = "retry_later"
)

// Error is the agent-facing refusal, served as HTTP 200 so URL readers show
// its body. Empty optional fields are left out of the JSON. The recovery
// URLs, when set, are exact: the agent fetches them as returned.
type Error struct {
	Code      string // errorCode, one of the Code constants (or a tool's own)
	Detail    string // errorDetail: concise, machine-readable
	Hint      string // repairHint: a human-readable correction
	Retryable bool   // whether a corrected request can succeed
	Action    string // agentAction

	Repair string // a corrected variant of the request
	Retry  string // a fresh identity for the same intent after recovery
	Next   string // a continuation
	Poll   string // where a pending result will appear
	Repeat string // an intentional re-execution

	extra []field
}

type field struct {
	key string
	val any
}

// Error implements error with the code and detail (lower-case, no URL).
func (e *Error) Error() string {
	if e.Detail == "" {
		return e.Code
	}
	return e.Code + ": " + e.Detail
}

// With adds a tool-specific field to the JSON body, after the standard ones.
// Keys that collide with standard fields are ignored.
func (e *Error) With(key string, val any) *Error {
	switch key {
	case "ok", "errorCode", "errorDetail", "repairHint", "retryable", "agentAction",
		"repair", "retry", "next", "poll", "repeat":
		return e
	}
	e.extra = append(e.extra, field{key, val})
	return e
}

// Clone returns a copy that can be changed (With, the URL fields) without
// touching e: a journal keeps one error and answers it to many requests.
func (e *Error) Clone() *Error {
	c := *e
	c.extra = append([]field(nil), e.extra...)
	return &c
}

// Field returns the value of a tool-specific field added with With.
func (e *Error) Field(key string) (any, bool) {
	for _, f := range e.extra {
		if f.key == key {
			return f.val, true
		}
	}
	return nil, false
}

// MarshalJSON writes {"ok":false,"errorCode":…} in a fixed key order. Write
// the result with an encoder that does not HTML-escape (see Marshal), or the
// & of the recovery URLs becomes \u0026.
func (e *Error) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil) }

// AppendJSON appends what MarshalJSON returns (null for a nil *Error, as
// encoding/json writes a nil pointer).
func (e *Error) AppendJSON(b []byte) ([]byte, error) {
	if e == nil {
		return append(b, "null"...), nil
	}
	b = append(b, `{"ok":false,"errorCode":`...)
	b = jsonw.String(b, e.Code)
	opt := func(k, v string) {
		if v != "" {
			b = append(b, `,"`...)
			b = append(b, k...)
			b = append(b, `":`...)
			b = jsonw.String(b, v)
		}
	}
	opt("errorDetail", e.Detail)
	opt("repairHint", e.Hint)
	if e.Retryable {
		b = append(b, `,"retryable":true`...)
	} else {
		b = append(b, `,"retryable":false`...)
	}
	opt("agentAction", e.Action)
	opt("repair", e.Repair)
	opt("retry", e.Retry)
	opt("next", e.Next)
	opt("poll", e.Poll)
	opt("repeat", e.Repeat)
	for _, f := range e.extra {
		b = append(b, ',')
		b = jsonw.String(b, f.key)
		b = append(b, ':')
		var err error
		if b, err = AppendJSON(b, f.val); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// Appender is an answer that writes its own JSON: byte for byte what
// encoding/json writes for it with HTML escaping off (null for a nil
// pointer), without reflection.
type Appender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// Marshal is json.Marshal without HTML escaping: agent-facing JSON carries
// exact URLs, and a reader that shows the body verbatim must show & as &.
func Marshal(v any) ([]byte, error) { return AppendJSON(nil, v) }

// AppendJSON appends what Marshal returns for v to b: an Appender's own
// bytes, anything else through encoding/json. On error b is returned as it
// was.
func AppendJSON(b []byte, v any) ([]byte, error) {
	if a, ok := v.(Appender); ok {
		out, err := a.AppendJSON(b)
		if err != nil {
			return b, err
		}
		return out, nil
	}
	return jsonw.Reflect(b, v)
}

// joinDetails joins several problems into one errorDetail.
func joinDetails(parts []string) string { return strings.Join(parts, "; ") }
