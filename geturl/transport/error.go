package transport

import (
	"strings"

	"github.com/hubdev/hub/geturl/fault"
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
	CodeConflictingParams   = fault.CodeConflictingParams
	CodeConflictingContent  = "conflicting_content_transports"
	CodeMissingParameter    = "missing_parameter"
	CodeEmptyParameter      = "empty_parameter"
	CodeInvalidParameter    = fault.CodeInvalidParameter
	CodeValueOutOfRange     = "value_out_of_range"
	CodeTooManyValues       = "too_many_values"
	CodeAmbiguousRange      = "ambiguous_range"
	CodeMisplacedControl    = "misplaced_control_parameter"
	CodeUnknownRoute        = "unknown_route"
	CodeWrongCapabilityBase = "wrong_capability_base"
	CodeMethodNotAllowed    = "method_not_allowed"
	CodeNotFound            = "not_found"
	CodeInternal            = fault.CodeInternal
)

// Error is the agent-facing refusal, served as HTTP 200 so URL readers show
// its body. Empty optional fields are left out of the JSON. The recovery
// URLs, when set, are exact: the agent fetches them as returned.
type Error struct {
	Code      string // errorCode, one of the Code constants (or a tool's own)
	Detail    string // errorDetail: concise, machine-readable
	Hint      string // repairHint: a human-readable correction
	Retryable bool   // whether a corrected request can succeed
	Action    string // agentAction, one of the fault.Action constants

	Repair string // a corrected variant of the request
	Retry  string // a fresh identity for the same intent after recovery
	Next   string // a continuation
	Poll   string // where a pending result will appear
	Repeat string // an intentional re-execution

	extra []fault.Field
}

// ErrorOf is the agent-facing form of an engine's fault: the same fields,
// no recovery URL yet (the caller adds those it can build). f is not
// changed. A nil fault is a nil error.
func ErrorOf(f *fault.Error) *Error {
	if f == nil {
		return nil
	}
	return &Error{Code: f.Code, Detail: f.Detail, Hint: f.Hint, Retryable: f.Retryable, Action: f.Action,
		extra: append([]fault.Field(nil), f.Fields()...)}
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
	if fault.Standard(key) {
		return e
	}
	e.extra = append(e.extra, fault.Field{Key: key, Val: val})
	return e
}

// Clone returns a copy that can be changed (With, the URL fields) without
// touching e: a journal keeps one error and answers it to many requests.
func (e *Error) Clone() *Error {
	c := *e
	c.extra = append([]fault.Field(nil), e.extra...)
	return &c
}

// Field returns the value of a tool-specific field added with With.
func (e *Error) Field(key string) (any, bool) {
	for _, f := range e.extra {
		if f.Key == key {
			return f.Val, true
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
	b = fault.AppendHead(b, e.Code, e.Detail, e.Hint, e.Retryable, e.Action)
	b = fault.AppendOpt(b, "repair", e.Repair)
	b = fault.AppendOpt(b, "retry", e.Retry)
	b = fault.AppendOpt(b, "next", e.Next)
	b = fault.AppendOpt(b, "poll", e.Poll)
	b = fault.AppendOpt(b, "repeat", e.Repeat)
	out, err := fault.AppendFields(b, e.extra)
	if err != nil {
		return nil, err
	}
	return out, nil
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
