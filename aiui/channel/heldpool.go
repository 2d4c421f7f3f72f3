package channel

import (
	"fmt"
	"sync/atomic"
)

// DefaultMaxHeldTotal bounds what the open threads of every connection
// sharing a HeldPool hold together. MaxHeldBytes bounds one connection,
// but the spec has no authentication, so any local process that says
// hello may open connections up to the listener's cap: 256 × 64 MiB.
const DefaultMaxHeldTotal = 256 << 20

// HeldPool is the bound the connections of one backend share on what
// their open threads hold. Its methods are safe for concurrent use.
type HeldPool struct {
	max  int64
	used atomic.Int64
}

// NewHeldPool makes a pool of max bytes (0: DefaultMaxHeldTotal).
func NewHeldPool(max int64) *HeldPool {
	if max <= 0 {
		max = DefaultMaxHeldTotal
	}
	return &HeldPool{max: max}
}

// Used is what the open threads hold now.
func (p *HeldPool) Used() int64 { return p.used.Load() }

func (p *HeldPool) take(n int64) error {
	for {
		u := p.used.Load()
		if u+n > p.max {
			return fmt.Errorf("the server's open threads would hold more than %d bytes; finish or close some", p.max)
		}
		if p.used.CompareAndSwap(u, u+n) {
			return nil
		}
	}
}

func (p *HeldPool) give(n int64) { p.used.Add(-n) }
