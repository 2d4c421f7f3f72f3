package hub

import "errors"

// Exit codes of every shell-facing command (the Stitch Slop command-line
// contract, used by the whole hub): agents check $? as well as the JSON.
const (
	ExitOK         = 0
	ExitFailed     = 1  // refused, or the command failed
	ExitNotRunning = 3  // nothing running, or a stale state/session file
	ExitUsage      = 64 // the caller got the command wrong
)

// ExitError ends a command with Code; its message, when not empty, is the
// one line the CLI prints on stderr. It satisfies urfave/cli's ExitCoder.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// ExitCode is the process exit code.
func (e *ExitError) ExitCode() int { return e.Code }

// Exit returns an error that ends the command with code after printing msg
// (nothing when msg is empty).
func Exit(code int, msg string) error { return &ExitError{Code: code, Msg: msg} }

// ExitCode maps an error to the process exit code: 0 for nil, the code of
// any error in the chain that carries one (ExitError, a client's typed
// error), else 1.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return ExitFailed
}
