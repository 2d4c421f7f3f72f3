package kernel

import (
	"errors"
	"strings"

	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// Tool-level error codes (the transport's own are in package transport).
// The codes the plugin host and the mutation routes share with the
// kernel are in package route.
const (
	// CodePluginCallsUnavailable: the catalog lists tools but runs none.
	CodePluginCallsUnavailable = "plugin_calls_unavailable"
	CodeUnknownResponse        = "unknown_response"
	CodeRangeOutOfBounds       = "range_out_of_bounds"
	CodeInvalidRegex           = "invalid_regex"
	CodeNotAFile               = "not_a_file"
	CodeNotADirectory          = "not_a_directory"
	CodeBinaryFile             = "binary_file"
	CodeReadFailed             = "read_failed"
)

// pathFailure turns a failure to resolve or read one path into the
// agent-facing error. display is the path as the sandbox shows it (virtual,
// or the request with the project root redacted), never a host path:
// sandbox and files errors are host-path free by construction, anything
// else is reduced to a code.
func pathFailure(display string, err error) *transport.Error {
	e := &transport.Error{Detail: "path=" + display, Retryable: true, Action: fault.ActionCorrectRequest}
	var pe *files.PathError
	switch {
	case sandbox.Code(err) != "":
		e.Code = sandbox.Code(err)
	case errors.As(err, &pe):
		e.Code = pe.Code
	default:
		e.Code, e.Retryable, e.Action = CodeReadFailed, false, ""
	}
	switch {
	case errors.Is(err, sandbox.ErrOutsideScope):
		e.Hint = "paths are relative to /project, start with /project/, or are native absolute paths inside the project"
		e.Retryable, e.Action = false, ""
	case e.Code == "path_not_found":
		e.Hint = "check the spelling; /f finds files by name"
	}
	return e
}

// UnknownRoute is the structured answer to an authenticated request for a
// route that is not served on the base it arrived on (bare 404s are kept
// for bad tokens only). The hint lists what that base serves.
func (k *Kernel) UnknownRoute(path string, on route.BaseKind) *transport.Error {
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
		Action:    fault.ActionCorrectRequest,
	}
}

// shortPath bounds an echoed route so an error stays small.
func shortPath(p string) string {
	if len(p) > 64 {
		return p[:64] + "…"
	}
	return p
}
