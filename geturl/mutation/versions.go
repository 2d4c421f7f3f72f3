package mutation

import (
	"sync"
	"time"
)

// versions counts the successful mutations of each project (by canonical
// root), across every session: a replayed terminal command offers a
// repeat URL only when its project has changed since it ran.
//
// Counts start at base, the process's start in Unix nanoseconds: a
// journal restored after a restart holds versions of the process before,
// which are all below it, so a command that ran before the restart
// offers a repeat (the project may have changed while no hub watched),
// and the repeat nonces of this process, derived from the version, are
// never those an earlier process offered.
type versions struct {
	mu   sync.Mutex
	base uint64
	n    map[string]uint64
}

func newVersions() versions { return versions{base: uint64(time.Now().UnixNano())} }

func (v *versions) get(root string) uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.base + v.n[root]
}

// bump records one successful mutation of root and returns the new
// version.
func (v *versions) bump(root string) uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.n == nil {
		v.n = map[string]uint64{}
	}
	v.n[root]++
	return v.base + v.n[root]
}
