package sandbox

// Resolver opens a path Resolve, ResolveExisting or ResolveNew returned (a
// realpath) without following a symlink in any component of it. A
// realpath holds no symlink, so one found there was swapped in after the
// check: a directory on the path renamed for a link to outside the
// project. A resolver makes check and open one step, so the open cannot
// follow it; such an open fails with an *Error of ErrSymlinkEscape, and
// other errors are the OS's.
//
// Which resolver a Scope uses is its seam (NewWith): the kernel's
// openat2(RESOLVE_NO_SYMLINKS) where Linux has it, and elsewhere a
// portable walk that opens one component at a time relative to its
// parent's descriptor, never following a link (on Windows, refusing any
// reparse point). Resolvers lists what this OS offers, the default first,
// so the tests run every suite against each.
type Resolver interface {
	// Open opens host, an absolute clean path, with flags (the OS's open
	// flags; close-on-exec and no-follow are added).
	Open(host string, flags int) (FD, error)
	// Name names the resolver ("openat2", "portable") for tests and status.
	Name() string
}

// Default is the resolver a Scope made by New uses: the first of
// Resolvers.
func Default() Resolver { return Resolvers()[0] }

// Open opens host with the default resolver (see Resolver). Callers that
// hold a Scope use Scope.Open, which honours the scope's resolver.
func Open(host string, flags int) (FD, error) { return Default().Open(host, flags) }

// Open opens host, a path this scope resolved, with the scope's resolver.
// On Windows it then checks the opened handle's final path
// (GetFinalPathNameByHandle) lies under the root's, and refuses it with
// ErrSymlinkEscape when it does not.
func (s *Scope) Open(host string, flags int) (FD, error) {
	fd, err := s.resolver.Open(host, flags)
	if err != nil {
		return fd, err
	}
	return s.beneath(fd)
}

// Resolver is the resolver the scope opens paths with.
func (s *Scope) Resolver() Resolver { return s.resolver }
