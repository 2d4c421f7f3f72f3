//go:build unix

package sandbox

import "io/fs"

// hostRules: every unix takes a path the same way, '/'-separated from
// one root, names compared byte for byte.
func hostRules() rules { return rules{} }

// opaque reports a file that links elsewhere without being a symlink:
// unix has none.
func opaque(fs.FileInfo) bool { return false }

// finalRoot is the root as an open handle names it; on unix the realpath
// New made is that already, and the resolvers never follow a link.
func finalRoot(real string) (string, error) { return real, nil }

// beneath checks an opened fd is under the scope's root. On unix the
// resolver's no-symlink open of a realpath under the root is that check.
func (s *Scope) beneath(fd FD) (FD, error) { return fd, nil }
