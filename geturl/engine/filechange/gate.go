package filechange

import (
	"context"
	"sync"
)

// Gate serialises mutations per project: every Write, Edit and ApplyPatch
// holds the slot of its scope's canonical root from its first read of a
// target to its last rename, so two sessions on one project never
// interleave their checks and writes (a coverage check, then someone
// else's write, then ours). Different projects do not wait for each other.
// The zero value is ready; one Gate is shared by every session of a
// process.
type Gate struct {
	mu    sync.Mutex
	slots map[string]*gateSlot
}

type gateSlot struct {
	held chan struct{} // capacity 1: full while someone holds the slot
	refs int           // holders and waiters; the slot is dropped at 0
}

// sharedGate serves engines built without a Gate, so forgetting to wire
// one can cost concurrency but never serialisation.
var sharedGate Gate

// Lock waits for the slot of root (a canonical project root) and returns
// the function that releases it. It fails only when ctx ends first.
func (g *Gate) Lock(ctx context.Context, root string) (unlock func(), err error) {
	g.mu.Lock()
	if g.slots == nil {
		g.slots = make(map[string]*gateSlot)
	}
	s := g.slots[root]
	if s == nil {
		s = &gateSlot{held: make(chan struct{}, 1)}
		g.slots[root] = s
	}
	s.refs++
	g.mu.Unlock()

	select {
	case s.held <- struct{}{}:
	case <-ctx.Done():
		g.drop(root, s)
		return nil, ctx.Err()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-s.held
			g.drop(root, s)
		})
	}, nil
}

func (g *Gate) drop(root string, s *gateSlot) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s.refs--
	if s.refs == 0 {
		delete(g.slots, root)
	}
}

// waiting reports how many callers hold or wait for root's slot (tests).
func (g *Gate) waiting(root string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.slots[root]; s != nil {
		return s.refs
	}
	return 0
}
