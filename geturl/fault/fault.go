// Package fault is geturl's error vocabulary, at the bottom of its layers:
// what an engine says when it refuses or fails — a code agents branch on,
// a detail, a repair hint, whether a corrected or later request can
// succeed, and what the agent should do next — without a URL. Engines
// (files, the file-change engine, the terminal, staging, the intent
// journal) return *Error; the URL layer (package transport, through the
// route handlers) turns one into the agent-facing answer and adds the
// exact recovery URLs (repair, retry, next, poll, repeat) that only it can
// build.
//
// Codes and actions are part of the wire contract: they never change
// spelling.
package fault

import "github.com/hubdev/hub/hub/jsonw"

// Agent actions: what the agent should do next (the contract's
// agentAction).
const (
	ActionCorrectRequest  = "correct_request"
	ActionFetchRepair     = "fetch_repair"
	ActionStageContent    = "stage_content"
	ActionRereadThenRetry = "reread_then_retry"
	ActionRunForeground   = "run_foreground"
	ActionRetryLater      = "retry_later"
)

// Codes more than one layer answers with.
const (
	CodeInvalidParameter  = "invalid_parameter"
	CodeConflictingParams = "conflicting_parameters"
	CodeInternal          = "internal_error"
)

// Error is a structured refusal or failure. Its text never holds a host
// path: an engine reduces what the OS says to a code and the path as the
// agent wrote it (or its /project spelling).
type Error struct {
	Code      string // errorCode
	Detail    string // errorDetail: concise, machine-readable
	Hint      string // repairHint: a human-readable correction
	Retryable bool   // whether a corrected or later request can succeed
	Action    string // agentAction, one of the Action constants or ""

	fields []Field
}

// Field is a tool-specific field of the answer ("path", "rule", …),
// written after the standard ones in the order it was added.
type Field struct {
	Key string
	Val any
}

// Error implements error with the code and detail.
func (e *Error) Error() string {
	if e.Detail == "" {
		return e.Code
	}
	return e.Code + ": " + e.Detail
}

// Standard reports whether key names one of the answer's standard fields
// (ok, errorCode, …, and the recovery URLs the URL layer adds), which a
// tool-specific field may not shadow.
func Standard(key string) bool {
	switch key {
	case "ok", "errorCode", "errorDetail", "repairHint", "retryable", "agentAction",
		"repair", "retry", "next", "poll", "repeat":
		return true
	}
	return false
}

// With adds a tool-specific field and returns e. A key that names a
// standard field is ignored.
func (e *Error) With(key string, val any) *Error {
	if !Standard(key) {
		e.fields = append(e.fields, Field{key, val})
	}
	return e
}

// Field returns the value of a tool-specific field added with With.
func (e *Error) Field(key string) (any, bool) {
	for _, f := range e.fields {
		if f.Key == key {
			return f.Val, true
		}
	}
	return nil, false
}

// Fields returns the tool-specific fields in the order they were added.
// The slice is e's own: do not change it.
func (e *Error) Fields() []Field { return e.fields }

// Clone returns a copy that can be changed without touching e: a journal
// keeps one error and answers it to many requests.
func (e *Error) Clone() *Error {
	c := *e
	c.fields = append([]Field(nil), e.fields...)
	return &c
}

// MarshalJSON writes the answer an agent gets for e when no recovery URL
// is added: {"ok":false,"errorCode":…} in the contract's key order, then
// the tool-specific fields, with HTML escaping off (so a reader that shows
// the body verbatim shows & as &). The URL layer writes the same bytes
// with its URLs in between.
func (e *Error) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil) }

// AppendJSON appends what MarshalJSON returns (null for a nil *Error, as
// encoding/json writes a nil pointer).
func (e *Error) AppendJSON(b []byte) ([]byte, error) {
	if e == nil {
		return append(b, "null"...), nil
	}
	b = AppendHead(b, e.Code, e.Detail, e.Hint, e.Retryable, e.Action)
	return AppendFields(b, e.fields)
}

// AppendHead appends the standard fields up to agentAction, the object
// left open: {"ok":false,"errorCode":…,"retryable":…. Empty optional
// fields are left out.
func AppendHead(b []byte, code, detail, hint string, retryable bool, action string) []byte {
	b = append(b, `{"ok":false,"errorCode":`...)
	b = jsonw.String(b, code)
	b = AppendOpt(b, "errorDetail", detail)
	b = AppendOpt(b, "repairHint", hint)
	if retryable {
		b = append(b, `,"retryable":true`...)
	} else {
		b = append(b, `,"retryable":false`...)
	}
	return AppendOpt(b, "agentAction", action)
}

// AppendOpt appends ,"key":"val" when val is not empty.
func AppendOpt(b []byte, key, val string) []byte {
	if val == "" {
		return b
	}
	b = append(b, `,"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	return jsonw.String(b, val)
}

// AppendFields appends the tool-specific fields and closes the object.
// A value that writes its own JSON (an AppendJSON method with this
// signature) is written that way, anything else as encoding/json writes
// it. On error b is returned as it was.
func AppendFields(b []byte, fields []Field) ([]byte, error) {
	start := len(b)
	for _, f := range fields {
		b = append(b, ',')
		b = jsonw.String(b, f.Key)
		b = append(b, ':')
		var err error
		if a, ok := f.Val.(interface {
			AppendJSON([]byte) ([]byte, error)
		}); ok {
			b, err = a.AppendJSON(b)
		} else {
			b, err = jsonw.Reflect(b, f.Val)
		}
		if err != nil {
			return b[:start], err
		}
	}
	return append(b, '}'), nil
}
