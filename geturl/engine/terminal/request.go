package terminal

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/fault"
)

// Request is one command to run.
type Request struct {
	// Command is shell text, run as Shell -c Command.
	Command string `json:"command"`
	// Cwd is where it starts: "" (the project root), a path relative to
	// the root, a /project/... path, or a native absolute path inside the
	// project. It must be an existing directory.
	Cwd string `json:"cwd,omitempty"`
	// Timeout is the foreground hard limit (0: Config.Timeout; at most
	// Config.MaxTimeout). Background launches ignore it.
	Timeout time.Duration `json:"-"`
}

// prepared is a validated Request.
type prepared struct {
	req     Request
	dir     string // host path
	cwd     string // virtual path
	timeout time.Duration
}

// prepare validates req before anything runs: the command (not empty, no
// NUL, not too long, not catastrophic), the timeout, and the cwd.
func (r *Runner) prepare(req Request) (prepared, *Error) {
	cfg := r.m.cfg
	switch {
	case strings.TrimSpace(req.Command) == "":
		return prepared{}, &Error{Code: CodeEmptyCommand, Detail: "command is empty", Retryable: true,
			Action: fault.ActionCorrectRequest, Hint: "put the command after raw= (or stage it and pass blob=)"}
	case strings.IndexByte(req.Command, 0) >= 0:
		return prepared{}, &Error{Code: CodeInvalidCommand, Detail: "command contains a NUL byte", Retryable: true,
			Action: fault.ActionCorrectRequest}
	case len(req.Command) > cfg.MaxCommand:
		return prepared{}, &Error{Code: CodeCommandTooLong,
			Detail:    "command is " + strconv.Itoa(len(req.Command)) + " bytes, at most " + strconv.Itoa(cfg.MaxCommand),
			Hint:      "write the script to a file with /w or /a and run it with the shell",
			Retryable: true, Action: fault.ActionCorrectRequest}
	}
	if dialectOf(cfg.Shell) == dialectCmd {
		if why := cmdLineRefusal(req.Command); why != "" {
			return prepared{}, &Error{Code: CodeInvalidCommand, Detail: why, Retryable: true,
				Action: fault.ActionCorrectRequest}
		}
	}
	if ref, bad := dialectOf(cfg.Shell).catastrophic(req.Command, ""); bad {
		return prepared{}, &Error{Code: CodeCatastrophic, Detail: ref.Reason + " (rule " + ref.Rule + ")",
			Hint:    "this machine-level command is refused before anything runs; terminal is for builds, tests, package managers, git and launching the app",
			Refusal: &ref}
	}
	timeout := req.Timeout
	if timeout == 0 {
		timeout = cfg.Timeout
	}
	if timeout < 0 || timeout > cfg.MaxTimeout {
		return prepared{}, &Error{Code: CodeTimeoutOutOfRange,
			Detail:    "timeout must be between 1 ms and " + cfg.MaxTimeout.String(),
			Retryable: true, Action: fault.ActionCorrectRequest}
	}
	cwd := req.Cwd
	if cwd == "" {
		cwd = sandbox.VirtualRoot
	}
	p, err := r.scope.ResolveExisting(cwd)
	if err != nil {
		code := sandbox.Code(err)
		if code == "" {
			code = "path_not_found"
		}
		return prepared{}, &Error{Code: code, Detail: "cwd=" + r.scope.Display(cwd), Retryable: true,
			Action: fault.ActionCorrectRequest, Hint: "cwd is a directory inside the project, relative to /project"}
	}
	if fi, err := os.Stat(p.Host); err != nil || !fi.IsDir() {
		return prepared{}, &Error{Code: CodeNotADirectory, Detail: "cwd=" + p.Virtual, Retryable: true,
			Action: fault.ActionCorrectRequest}
	}
	// Judged again from where it starts: "../../.." can climb to / from
	// there, which the check above, not knowing the directory, lets pass.
	if ref, bad := dialectOf(cfg.Shell).catastrophic(req.Command, p.Host); bad {
		return prepared{}, &Error{Code: CodeCatastrophic, Detail: ref.Reason + " (rule " + ref.Rule + ")",
			Hint:    "this machine-level command is refused before anything runs; terminal is for builds, tests, package managers, git and launching the app",
			Refusal: &ref}
	}
	return prepared{req: req, dir: p.Host, cwd: p.Virtual, timeout: timeout}, nil
}

func (r *Runner) spawnSpec(pr prepared, limit int) spawnSpec {
	return spawnSpec{
		shell:   r.m.cfg.Shell,
		command: pr.req.Command,
		dir:     pr.dir,
		env:     childEnv(r.m.cfg.Env, r.m.cfg.SecretPatterns, pr.dir),
		root:    r.scope.Root(),
		limit:   limit,
	}
}

func (r *Runner) spawn(pr prepared, limit int) (*proc, *Error) {
	cfg := r.m.cfg
	p, err := spawn(r.spawnSpec(pr, limit), cfg.Clock, cfg.KillGrace, cfg.DrainWait)
	if err != nil {
		return nil, spawnError(err)
	}
	return p, nil
}

// spawnError is what the agent is told when the shell could not start.
// The OS error names host paths (the shell, the directory): only its
// errno is kept. An OS without the terminal says so by name.
func spawnError(err error) *Error {
	var unsupported *UnsupportedError
	if errors.As(err, &unsupported) {
		return &Error{Code: CodeSpawnFailed, Detail: unsupported.Error(), Retryable: false}
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return &Error{Code: CodeSpawnFailed, Retryable: true, Action: fault.ActionRetryLater,
			Detail: "the command's supervisor did not report the shell started within " + reaperStartWait.String() +
				"; whatever the command had started was killed"}
	}
	detail := "could not start the shell"
	var errno syscall.Errno
	if errors.As(err, &errno) {
		detail += ": " + errno.Error()
	}
	return &Error{Code: CodeSpawnFailed, Detail: detail, Retryable: false}
}
