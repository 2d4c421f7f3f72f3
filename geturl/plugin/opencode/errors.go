package opencode

import (
	"errors"

	"github.com/hubdev/hub/geturl/plugin"
	"github.com/hubdev/hub/hub/portowner"
)

// Error codes of the plugin's structured refusals.
const (
	CodeInvalidArguments = "invalid_arguments"
	CodeUnknownTool      = "unknown_tool"
	CodeUnknownAction    = "unknown_action"
	CodeMissingArgument  = "missing_argument"
	CodeOutsideRoot      = "session_outside_root"
	CodeNotFound         = "not_found"
	CodeNotWorker        = "not_a_worker"
	CodeForbidden        = "authority_required"
	CodeWorkerLimit      = "worker_limit"
	CodeWorkerBusy       = "worker_busy"
	CodeDisabled         = "opencode_disabled"
	CodeNotLoopback      = "opencode_not_loopback"
	CodeOffline          = "opencode_offline"
	CodeNeedsAuth        = "opencode_needs_auth"
	CodeInstanceChanged  = "opencode_instance_changed"
	CodeForeignListener  = "opencode_foreign_listener"
	CodeOwnerUnknown     = "opencode_owner_unknown"
	CodeUpstream         = "opencode_error"
	CodeAmbiguous        = "opencode_ambiguous"
)

// toolError turns an error from the client or the OpenCode API into the
// agent-facing *plugin.Error; plugin errors pass through.
func toolError(err error) error {
	if err == nil {
		return nil
	}
	var pe *plugin.Error
	if errors.As(err, &pe) {
		return pe
	}
	var ae *apiError
	switch {
	case errors.Is(err, ErrInstanceChanged):
		return &plugin.Error{Code: CodeInstanceChanged, Detail: err.Error(),
			Hint: "the plugin fails closed; the operator restarts the hub after checking which process serves the OpenCode port"}
	case errors.Is(err, ErrForeignListener):
		return &plugin.Error{Code: CodeForeignListener, Detail: err.Error(),
			Hint: "the plugin sends nothing to another user's process; the operator stops it or points GETMCP_OPENCODE_URL at their own `opencode serve`"}
	case errors.Is(err, ErrOwnerUnknown):
		if errors.Is(err, portowner.ErrUnknown) {
			return &plugin.Error{Code: CodeOwnerUnknown, Detail: err.Error(),
				Hint: "the credential goes only to a listener verified to be this user's, which this system cannot check yet (Linux reads its socket table); an OpenCode that needs no credential still works"}
		}
		return &plugin.Error{Code: CodeOwnerUnknown, Detail: err.Error(), Retryable: true,
			Hint: "retry; if it persists, the operator checks what serves the OpenCode port (ss -ltnp)"}
	case errors.Is(err, errNeedsAuth):
		return &plugin.Error{Code: CodeNeedsAuth, Detail: err.Error(),
			Hint: "the operator sets GETMCP_OPENCODE_DEVICE_TOKEN or GETMCP_OPENCODE_BOOTSTRAP_PASSWORD"}
	case errors.As(err, &ae):
		if ae.Status == 404 {
			return &plugin.Error{Code: CodeNotFound, Detail: ae.Error()}
		}
		return &plugin.Error{Code: CodeUpstream, Detail: ae.Error(), Retryable: ae.Status >= 500}
	}
	return &plugin.Error{Code: CodeOffline, Detail: err.Error(), Retryable: true,
		Hint: "start `opencode serve` on the configured loopback port, then retry"}
}

func badArgs(format string, a ...any) *plugin.Error {
	return plugin.Errorf(CodeInvalidArguments, false, format, a...)
}

func missing(action, field string) *plugin.Error {
	return plugin.Errorf(CodeMissingArgument, false, "action %q needs %s", action, field)
}
