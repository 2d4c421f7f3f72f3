// Package search is the engine behind /f (find) and /g (grep).
//
// Grep searches one file or one directory tree for a pattern, line by line:
// literally by default, as a Go RE2 regular expression on request, always
// bounded (matches, line length, files, bytes, time). When ripgrep (rg) is
// on PATH it does the searching — run directly, never through a shell, with
// its config file and ignore files disabled, symlinks not followed, the
// hub's environment without its secrets (package childenv), and the
// pattern translated so it means exactly what the Go fallback means — and
// otherwise a Go implementation produces the same results in the same order
// (depth-first, names sorted bytewise). A bad regular expression is a
// *RegexError (errors.Is ErrBadRegex) so the caller can offer the literal
// form instead.
//
// Find walks a directory tree for names containing a literal substring and,
// optionally, files containing a literal text.
//
// Both skip what is never worth searching: symlinks (not followed), files
// that are not regular, binary files (a NUL byte in the first 8000 bytes),
// files larger than Limits.MaxFileBytes, and the contents of directories
// named in SkipDirs (VCS metadata, dependency trees, caches) unless the
// search starts inside one. Paths come back as virtual "/project/..." paths,
// slash-separated on every OS.
//
// The walk lists each directory through its handle and opens each child
// relative to it, never by path (walk.go; walk_unix.go with openat,
// walk_windows.go with sandbox.OpenDirAt and FileFullDirectoryInfo). On
// Windows every reparse point (symlink, junction, mount point, cloud or
// deduplicated placeholder) is reported as a symlink and not followed. rg
// runs where it can start in a directory that cannot be swapped while it
// starts: Linux (/proc/self/fd) and Windows (rg.exe from PATH, with every
// directory on the path held open without FILE_SHARE_DELETE); its '\'
// paths become '/'. Elsewhere the Go engine answers. Include globs are
// case-sensitive on every OS, as rg's --glob is (Find's Name is not).
package search
