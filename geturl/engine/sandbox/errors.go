package sandbox

import (
	"errors"
	"io/fs"
	"syscall"
)

// Sentinel errors, matched with errors.Is. Every *Error also matches the
// broader sentinel of its family: the escape kinds match ErrOutsideScope,
// ErrNotFound matches fs.ErrNotExist, ErrPermission matches fs.ErrPermission.
var (
	ErrOutsideScope  = errors.New("path is outside the project scope")
	ErrTraversal     = errors.New("path climbs above the project root")
	ErrSymlinkEscape = errors.New("path resolves through a symlink to outside the project scope")
	ErrInvalidPath   = errors.New("path is empty or contains a NUL byte")
	ErrPathTooLong   = errors.New("path is too long")
	ErrNotFound      = errors.New("path does not exist")
	ErrNotDirectory  = errors.New("a parent of the path is not a directory")
	ErrSymlinkLoop   = errors.New("too many levels of symlinks")
	ErrPermission    = errors.New("permission denied")
	ErrNotDir        = errors.New("project root is not a directory")
	ErrVCSMetadata   = errors.New("path is version-control metadata (.git, .hg, .svn, .jj, .bzr or a git directory)")
	ErrAutorunConfig = errors.New("path is configuration that tools run on their own (agent, editor or shell settings)")
	ErrInvalidName   = errors.New("path has a name Windows cannot hold (a control character, one of <>\"|?*, or invalid UTF-8)")
	ErrReservedName  = errors.New("path has a name Windows takes for another (a device such as CON or NUL, a :stream, a trailing dot or space, or an 8.3 short name such as NAME~1)")
)

// Error is a path refusal. Its message is one of the sentinel messages above
// and never contains a host path; Code is a stable snake_case identifier a
// caller can put in a structured tool error.
type Error struct {
	Kind error
	Code string
}

func (e *Error) Error() string { return e.Kind.Error() }

// Unwrap lets errors.Is match the specific sentinel and its family.
func (e *Error) Unwrap() []error {
	switch e.Kind {
	case ErrTraversal, ErrSymlinkEscape:
		return []error{e.Kind, ErrOutsideScope}
	case ErrNotFound:
		return []error{e.Kind, fs.ErrNotExist}
	case ErrPermission:
		return []error{e.Kind, fs.ErrPermission}
	}
	return []error{e.Kind}
}

var codes = map[error]string{
	ErrOutsideScope:  "path_outside_scope",
	ErrTraversal:     "path_traversal",
	ErrSymlinkEscape: "symlink_escape",
	ErrInvalidPath:   "invalid_path",
	ErrPathTooLong:   "path_too_long",
	ErrNotFound:      "path_not_found",
	ErrNotDirectory:  "not_a_directory",
	ErrSymlinkLoop:   "symlink_loop",
	ErrPermission:    "permission_denied",
	ErrNotDir:        "not_a_directory",
	ErrVCSMetadata:   "vcs_metadata",
	ErrAutorunConfig: "autorun_config",
	ErrInvalidName:   "invalid_name",
	ErrReservedName:  "reserved_name",
}

func newErr(kind error) *Error { return &Error{Kind: kind, Code: codes[kind]} }

// Code returns the stable code of a sandbox error, or "" when err is not one.
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// classify turns an OS error from resolving a path into a typed refusal,
// dropping the OS message (it carries the host path).
func classify(err error) *Error {
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno) && errno == syscall.ENAMETOOLONG:
		return newErr(ErrPathTooLong)
	case errors.As(err, &errno) && errno == syscall.ELOOP:
		return newErr(ErrSymlinkLoop)
	case errors.As(err, &errno) && errno == syscall.ENOTDIR:
		return newErr(ErrNotDirectory)
	case errors.Is(err, fs.ErrNotExist):
		return newErr(ErrNotFound)
	case errors.Is(err, fs.ErrPermission):
		return newErr(ErrPermission)
	}
	return newErr(ErrNotFound)
}
