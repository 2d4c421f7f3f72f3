package supervisor

import (
	"math/rand/v2"
	"time"
)

// Backoff is the restart policy: exponential, capped, with jitter, and a
// crash-loop limit after which an adapter is marked failed.
type Backoff struct {
	Base time.Duration // first delay
	Max  time.Duration // cap
	// MaxFailures consecutive failures mark the adapter failed. A run that
	// lasted StableAfter or longer resets the count.
	MaxFailures int
	StableAfter time.Duration
}

// DefaultBackoff: 0.5 s, 1 s, 2 s, … capped at 30 s; five quick failures in
// a row is a crash loop.
var DefaultBackoff = Backoff{Base: 500 * time.Millisecond, Max: 30 * time.Second, MaxFailures: 5, StableAfter: time.Minute}

// Delay is the wait before restart number n (1-based): the exponential
// step, capped, then jittered into [d/2, d) so adapters that failed
// together do not restart in lockstep.
func (b Backoff) Delay(n int) time.Duration {
	d := b.Base
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	half := d / 2
	return half + rand.N(d-half+1)
}
