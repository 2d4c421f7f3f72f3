//go:build unix && !linux

package sandbox

import "golang.org/x/sys/unix"

// Resolvers off Linux: the portable walk; these kernels have no openat2.
func Resolvers() []Resolver { return []Resolver{portable{}} }

// searchFlags open a directory on the way to look names up in it. Without
// O_PATH that takes read permission: a directory on the project's path
// that its user may search but not list cannot be walked through.
const searchFlags = unix.O_RDONLY
