package hub

import "golang.org/x/sys/unix"

// MakeUndumpable clears the process's dumpable flag (prctl
// PR_SET_DUMPABLE 0), so that no other process of the same user can read
// what the hub holds: its memory, environment and file descriptors. The
// kernel then makes /proc/<pid>/{environ,mem,maps,auxv,fd,cwd,exe,…}
// root-owned and refuses them (and ptrace attach) to anyone without
// CAP_SYS_PTRACE, the hub's own children included: a terminal command
// that walks up its parents finds the hub's environment closed. It also
// stops core dumps, which would hold the same secrets.
//
// What stays readable to everyone, as for any process: cmdline (so the
// hub's argv must never carry a secret), stat, status and comm, and the
// flock table in /proc/locks. The exe link does not, so ProcessCommand
// returns an empty exe for a hub it inspects without privilege.
//
// The flag is per process and survives fork, but execve resets it, so the
// hub's children (the terminal's reaper and shells, git, rg) are ordinary
// processes again, holding only the environment they were given. Call it
// first thing in main, before any secret is read or made.
func MakeUndumpable() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

// Undumpable reports whether MakeUndumpable is in effect.
func Undumpable() (bool, error) {
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	return err == nil && v == 0, err
}
