package mutation

import "sync"

// versions counts the successful mutations of each project (by canonical
// root), across every session: a replayed terminal command offers a
// repeat URL only when its project has changed since it ran.
type versions struct {
	mu sync.Mutex
	n  map[string]uint64
}

func (v *versions) get(root string) uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.n[root]
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
	return v.n[root]
}
