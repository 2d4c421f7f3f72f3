package kernel

import (
	"errors"
	"strings"

	"github.com/hubdev/hub/geturl/sandbox"
	"github.com/hubdev/hub/geturl/transport"
)

// Tool-level error codes (the transport's own are in package transport).
const (
	CodeUnknownPlugin     = "unknown_plugin"
	CodeUnknownResponse   = "unknown_response"
	CodeRangeOutOfBounds  = "range_out_of_bounds"
	CodeInvalidRegex      = "invalid_regex"
	CodeNotAFile          = "not_a_file"
	CodeNotADirectory     = "not_a_directory"
	CodeBinaryFile        = "binary_file"
	CodeReadFailed        = "read_failed"
	CodeMutationsDisabled = "mutations_disabled"
)

// PathError turns a sandbox refusal (or an OS error while reading a
// resolved path) into the agent-facing error. The message never carries a
// host path: sandbox errors are host-path free by construction, and other
// errors are reduced to a code.
func PathError(p string, err error) *transport.Error {
	code := sandbox.Code(err)
	e := &transport.Error{Code: code, Detail: "path=" + p, Retryable: true, Action: transport.ActionCorrectRequest}
	switch {
	case code == "":
		e.Code, e.Retryable, e.Action = CodeReadFailed, false, ""
	case errors.Is(err, sandbox.ErrOutsideScope):
		e.Hint = "paths are relative to /project, /project/..., or native absolute paths inside the project"
		e.Retryable = false
	case errors.Is(err, sandbox.ErrNotFound):
		e.Hint = "check the spelling; /f finds files by name"
	}
	return e
}

// UnknownRoute is the structured answer to an authenticated request for a
// route that is not served on the base it arrived on (bare 404s are kept
// for bad tokens only). The hint lists what that base serves.
func (k *Kernel) UnknownRoute(path string, on BaseKind) *transport.Error {
	var served []string
	for _, r := range k.routes {
		if r.Served() && r.OnBase(on) {
			served = append(served, r.Path)
		}
	}
	return &transport.Error{
		Code:      transport.CodeUnknownRoute,
		Detail:    "route " + shortPath(path),
		Hint:      "this base serves " + strings.Join(served, " "),
		Retryable: true,
		Action:    transport.ActionCorrectRequest,
	}
}

// shortPath bounds an echoed route so an error stays small.
func shortPath(p string) string {
	if len(p) > 64 {
		return p[:64] + "…"
	}
	return p
}
