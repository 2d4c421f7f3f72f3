package filechange

import (
	"errors"
	"io/fs"
	"strconv"
	"syscall"

	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/fault"
)

// Error codes of the mutation engine. Every error the engine returns is a
// *fault.Error with one of these codes or a sandbox path code
// (path_outside_scope, symlink_escape, path_not_found, ...). They are part
// of the wire contract: agents branch on them.
const (
	// Whole-file overwrite (/w on an existing file).
	CodeReadRequired   = "read_required"   // the session never read the file (or its coverage was invalidated)
	CodeReadIncomplete = "read_incomplete" // some lines of the current version were never returned
	CodeStaleRead      = "stale_read"      // the file changed since it was read

	// Any target.
	CodeNotRegularFile  = "not_a_regular_file"
	CodeIsDirectory     = "is_a_directory"
	CodeFileExists      = "file_exists"
	CodeFileTooLarge    = "file_too_large"
	CodeContentTooLarge = "content_too_large"

	// /e.
	CodeEditOldEmpty     = "edit_old_empty"
	CodeEditOldNotFound  = "edit_old_not_found"
	CodeEditOldAmbiguous = "edit_old_ambiguous"
	CodeEditNoChange     = "edit_no_change"

	// /a.
	CodePatchInvalid      = "patch_invalid"
	CodePatchTooLarge     = "patch_too_large"
	CodePatchEmpty        = "patch_empty"
	CodePatchFileNotFound = "patch_file_not_found"
	CodePatchHunkNotFound = "patch_hunk_not_found"
	CodePatchTooComplex   = "patch_too_complex"

	// Commit.
	CodePermissionDenied   = "permission_denied"
	CodeNoSpace            = "no_space_left"
	CodeReadOnlyFS         = "read_only_filesystem"
	CodeReadFailed         = "read_failed"
	CodeWriteFailed        = "write_failed"
	CodeRollbackIncomplete = "rollback_incomplete"
	CodeProjectBusy        = "project_busy"
)

// VCSHint is the repair hint of a vcs_metadata refusal.
const VCSHint = "the file tools never change version-control metadata (.git, .hg, .svn, .jj, .bzr, a .git file, a git directory under any name): " +
	"a change there can make the next git command run anything; change the project's own files, and leave repository metadata to the operator"

// AutorunHint is the repair hint of an autorun_config refusal.
const AutorunHint = "this session has no terminal, so the file tools do not change configuration that tools run on their own " +
	"(agent settings and hooks: .claude/, .mcp.json, opencode.json, .opencode/, .codex/, .gemini/, .cursor/; editor settings: .vscode/, .idea/, .zed/, .devcontainer/; mise.toml): " +
	"a change there runs commands the next time an agent starts in the project or an editor opens it. " +
	"A session with the terminal may change them (it can run commands anyway); the operator grants it per project"

// refusal builds an agent-facing error.
func refusal(code, detail, hint, action string, retryable bool) *fault.Error {
	return &fault.Error{Code: code, Detail: detail, Hint: hint, Action: action, Retryable: retryable}
}

// pathFailure is a path the sandbox refused. Sandbox messages never carry a
// host path and display is the sandbox's own safe echo of the request.
func pathFailure(display string, err error) *fault.Error {
	code := sandbox.Code(err)
	if code == "" {
		return ioFailure(display, "resolve", err)
	}
	e := refusal(code, err.Error()+": "+display, "", fault.ActionCorrectRequest, true)
	switch {
	case errors.Is(err, sandbox.ErrOutsideScope):
		e.Hint = "mutations stay inside /project: name a path relative to /project, starting with /project/, or a native absolute path inside the project; symlinks may not lead out"
		e.Retryable, e.Action = false, ""
	case errors.Is(err, sandbox.ErrNotFound):
		e.Hint = "check the spelling; /f finds files by name"
	case errors.Is(err, sandbox.ErrVCSMetadata):
		e.Hint, e.Retryable, e.Action = VCSHint, false, ""
	case errors.Is(err, sandbox.ErrAutorunConfig):
		e.Hint, e.Retryable, e.Action = AutorunHint, false, ""
	}
	e.With("path", display)
	return e
}

// ioFailure turns an OS error into a code. The OS message is dropped: it
// names the file on the host.
func ioFailure(virtual, op string, err error) *fault.Error {
	var errno syscall.Errno
	errors.As(err, &errno)
	var e *fault.Error
	switch {
	case errors.Is(err, fs.ErrPermission):
		e = refusal(CodePermissionDenied, op+" "+virtual+": permission denied", "the hub's user may not change this path", "", false)
	case errno == syscall.ENOSPC || errno == syscall.EDQUOT:
		e = refusal(CodeNoSpace, op+" "+virtual+": no space left on the device", "free disk space, then retry", fault.ActionRetryLater, true)
	case errno == syscall.EROFS:
		e = refusal(CodeReadOnlyFS, op+" "+virtual+": read-only file system", "", "", false)
	case op == "read":
		e = refusal(CodeReadFailed, "read "+virtual+" failed", "", fault.ActionRetryLater, true)
	default:
		e = refusal(CodeWriteFailed, op+" "+virtual+" failed", "", fault.ActionRetryLater, true)
	}
	e.With("path", virtual)
	return e
}

// fileFailure reports why the file at virtual could not be read or written.
func fileFailure(virtual, op string, err error, limit int64) *fault.Error {
	var e *fault.Error
	switch {
	case errors.Is(err, errIsDir):
		e = refusal(CodeIsDirectory, virtual+" is a directory", "name a file", fault.ActionCorrectRequest, true)
	case errors.Is(err, errNotRegular):
		e = refusal(CodeNotRegularFile, virtual+" is not a regular file", "only regular files can be changed with these tools", "", false)
	case errors.Is(err, errTooLarge):
		e = refusal(CodeFileTooLarge, virtual+" is larger than "+sizeText(limit), "files this large are changed with the terminal (/x)", "", false)
	case errors.Is(err, fs.ErrNotExist):
		e = refusal("path_not_found", sandbox.ErrNotFound.Error()+": "+virtual, "check the spelling; /f finds files by name", fault.ActionCorrectRequest, true)
	default:
		return ioFailure(virtual, op, err)
	}
	e.With("path", virtual)
	return e
}

// sizeText prints a byte limit the way the spec does (8 MiB, 160 KiB).
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
