// Package sandbox confines agent-supplied paths to one project root.
//
// A Scope is the canonical realpath of a project directory. Agents name
// files relative to it, as virtual "/project/..." paths, or as native
// absolute paths that happen to lie inside it; every answer the agent sees
// uses the virtual form, so the host location of the project never leaks.
//
// Existing targets are accepted only when their realpath (every symlink
// followed) stays inside the root. New targets are accepted when the
// realpath of their nearest existing ancestor does — following dangling
// symlinks on the way, so a link pointing outside cannot be used to create a
// file there. Errors are typed (errors.Is against ErrOutsideScope,
// ErrTraversal, ...) and their messages never contain a host path.
//
// ResolveMutable is ResolveNew for a path about to change: it also refuses
// version-control metadata (ErrVCSMetadata), judged by VCSComponent on the
// path as named and as resolved, and by the shape of a git directory on
// its ancestors. Unless its Allow says otherwise, it refuses configuration
// that a developer's tools run on their own (ErrAutorunConfig: an agent's
// hooks and MCP servers, an editor's tasks), judged by AutorunComponent on
// the path as named and as resolved, and by where a symlink named as such
// configuration leads, for links at the root and directly inside such a
// directory at the root; a link deeper in the tree (sub/.vscode ->
// ../editor) is not looked for. Reads are not restricted.
//
// How a path is taken is the host's rules (rules.go, chosen per OS in
// rules_unix.go and rules_windows.go, and portable, so the Linux tests
// run Windows' too). On unix '/' separates and every other byte is a
// name's. On Windows '/' and '\' both separate; the one absolute form an
// agent may name is a drive path (C:\...), and every other root (a UNC
// share, \\?\, \\.\, \??\, \x, the drive-relative C:x) is outside the
// scope; a name Win32 would take for another file or for a device is
// refused with ErrReservedName (CON, NUL.txt and the other devices, an
// alternate data stream, a trailing dot or space, the shape of an 8.3
// short name), one NTFS cannot hold with ErrInvalidName; root paths
// compare with ASCII letters folded. Names reached through a symlink's
// target are judged the same way, save for the short-name shape.
//
// Resolution is a check, not a lock: a process that can create symlinks in
// the project between the check and the use could race it, by renaming a
// directory on the resolved path for a link to outside. The agent has no
// way to create symlinks except the terminal tool, which is a real host
// shell anyway; still, callers open a resolved path with Scope.Open,
// which refuses a symlink in any component of it, so check and open
// cannot be split. How is the scope's Resolver: openat2
// RESOLVE_NO_SYMLINKS where Linux has it, elsewhere (and on Linux without
// openat2) a portable walk that opens one component at a time relative to
// its parent's descriptor with O_NOFOLLOW|O_DIRECTORY. On Windows the walk
// opens each name relative to its parent's handle with NtCreateFile,
// refuses every reparse point (symlink, junction, mount point), and
// Scope.Open checks the opened handle's GetFinalPathNameByHandle lies
// under the root's; the walk before it refuses a reparse point that is
// no symlink. The tests run the sandbox and mutation escape suites
// against every resolver of the OS; the Windows resolver is built and
// vetted here but runs only on Windows.
package sandbox
