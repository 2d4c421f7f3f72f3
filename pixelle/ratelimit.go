package pixelle

import "time"

// rateLimiter allows limit events per window for each key (a loopback peer
// address), as a sliding log of at most limit timestamps per key. Tracking
// is bounded: at most maxKeys entries, expired entries are pruned, and when
// the table is full of live entries new keys are refused rather than
// evicting someone who is being throttled. Guarded by relay.mu.
type rateLimiter struct {
	limit   int
	window  time.Duration
	maxKeys int
	hits    map[string][]time.Time
	pruned  time.Time // last full prune, so idle entries expire
}

func newRateLimiter(limit int, window time.Duration, maxKeys int) *rateLimiter {
	return &rateLimiter{limit: limit, window: window, maxKeys: maxKeys, hits: map[string][]time.Time{}}
}

// allow records an attempt by key at now and reports whether it is within
// the limit. A refused attempt is not recorded.
func (r *rateLimiter) allow(key string, now time.Time) bool {
	if now.Sub(r.pruned) >= r.window {
		r.prune(now)
		r.pruned = now
	}
	live := r.live(r.hits[key], now)
	if len(live) == 0 {
		delete(r.hits, key)
		if len(r.hits) >= r.maxKeys {
			r.prune(now)
			if len(r.hits) >= r.maxKeys {
				return false
			}
		}
	}
	if len(live) >= r.limit {
		r.hits[key] = live
		return false
	}
	r.hits[key] = append(live, now)
	return true
}

// live drops timestamps older than the window (the log is in order).
func (r *rateLimiter) live(ts []time.Time, now time.Time) []time.Time {
	cut := now.Add(-r.window)
	i := 0
	for i < len(ts) && !ts[i].After(cut) {
		i++
	}
	return ts[i:]
}

// prune forgets keys with no attempt inside the window.
func (r *rateLimiter) prune(now time.Time) {
	for k, ts := range r.hits {
		if live := r.live(ts, now); len(live) == 0 {
			delete(r.hits, k)
		} else {
			r.hits[k] = live
		}
	}
}

// size is the number of tracked keys (for tests).
func (r *rateLimiter) size() int { return len(r.hits) }
