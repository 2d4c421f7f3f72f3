package terminal

import "github.com/hubdev/hub/geturl/fault"

// Error codes of the terminal. They are part of the wire contract. A bad
// cwd is reported with the sandbox's own codes (path_not_found,
// path_outside_scope, symlink_escape, …) or not_a_directory.
const (
	CodeEmptyCommand          = "empty_command"
	CodeInvalidCommand        = "invalid_command"
	CodeCommandTooLong        = "command_too_long"
	CodeCatastrophic          = "catastrophic_command"
	CodeNotADirectory         = "not_a_directory"
	CodeTimeoutOutOfRange     = "timeout_out_of_range"
	CodeBusy                  = "terminal_busy"
	CodeBackgroundLimit       = "background_limit_reached"
	CodeSpawnFailed           = "spawn_failed"
	CodeShuttingDown          = "terminal_shutting_down"
	CodeCanceled              = "terminal_canceled"
	CodeBackgroundStartFailed = "background_start_failed"
	CodeUnknownProcess        = "unknown_process"
)

// Error is a structured terminal refusal or failure. Its text never holds
// a host path. The caller turns it into the agent-facing error (Fault)
// and adds the recovery URLs it can build.
type Error struct {
	Code      string
	Detail    string
	Hint      string
	Retryable bool
	// Action is the spec's agentAction (fault.Action* values).
	Action string
	// Refusal is set for catastrophic_command.
	Refusal *Refusal
	// Repair is set for background_start_failed: the foreground form of
	// the command, for the caller to offer as the repair URL.
	Repair *Request
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return e.Code
	}
	return e.Code + ": " + e.Detail
}

// Fault returns the agent-facing error without recovery URLs (the caller
// knows the bases; for background_start_failed it builds the repair URL
// from Repair). A catastrophic refusal carries its rule.
func (e *Error) Fault() *fault.Error {
	t := &fault.Error{Code: e.Code, Detail: e.Detail, Hint: e.Hint, Retryable: e.Retryable, Action: e.Action}
	if e.Refusal != nil {
		t.With("rule", e.Refusal.Rule)
	}
	return t
}
