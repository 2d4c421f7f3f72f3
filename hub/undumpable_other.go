//go:build !linux

package hub

// MakeUndumpable does nothing outside Linux, where nothing equivalent is
// implemented yet; it keeps the call in main portable.
//
// macOS: another process of the same user reads the hub's argv and
// environment through sysctl KERN_PROCARGS2 (what `ps -E` shows); the
// kernel withholds the environment only from code-signing-restricted
// targets (Apple's own binaries under SIP), not from an ordinary build of
// hub, and no flag a process can set changes that. ptrace(PT_DENY_ATTACH)
// would only refuse debuggers. Reading the hub's memory needs task_for_pid,
// which macOS grants a same-user process only under its developer-tools
// rules. So on macOS the stripping of secrets from the terminal's children
// is the only barrier: a command can still read the environment the hub
// was started with.
//
// Windows: a process of the same user may open the hub with
// PROCESS_VM_READ (the default DACL grants its owner full access) and read
// its memory and environment block; tightening the process DACL is not
// done.
func MakeUndumpable() error { return nil }

// Undumpable reports false: see MakeUndumpable.
func Undumpable() (bool, error) { return false, nil }
