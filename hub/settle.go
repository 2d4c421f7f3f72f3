package hub

import (
	"context"
	"time"
)

// Settle calls try every poll until it reports true, for at most within:
// the wait for something another process is a moment away from doing (a
// bridge binds its port a moment before it writes the file that names it).
// It reports whether try succeeded before within passed or ctx ended.
func Settle(ctx context.Context, poll, within time.Duration, try func() bool) bool {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return false
		case <-tick.C:
		}
		if try() {
			return true
		}
	}
}

// Sleep waits d unless ctx ends first; it reports whether it waited all of
// d.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
