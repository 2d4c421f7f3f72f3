package session

import "fmt"

// Error codes the control plane and CLI report.
const (
	CodeProjectNotFound  = "project_not_found"
	CodeProjectExists    = "project_exists"
	CodeProjectInUse     = "project_in_use"
	CodeInvalidProject   = "invalid_project"
	CodeInvalidName      = "invalid_name"
	CodeSessionNotFound  = "session_not_found"
	CodeEnabledLimit     = "enabled_session_limit_reached"
	CodeDefinitionLimit  = "session_definition_limit_reached"
	CodeRootUnavailable  = "project_root_unavailable"
	CodeBridgesNeedWrite = "bridges_need_write"
)

// errBridgesNeedWrite refuses the bridges opt-in on a project without
// write, saying why.
func errBridgesNeedWrite(name string) *Error {
	return errorf(CodeBridgesNeedWrite, "project %s: --bridges needs --write: a page's tool can do anything the page can, "+
		"so a session that reaches the hub's bridges can change things whatever its project allows; give the project write first", name)
}

// Error is an operator-facing refusal with a stable code.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

func errorf(code, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}
