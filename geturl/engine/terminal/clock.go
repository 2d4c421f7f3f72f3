package terminal

import "time"

// Clock is the time source of every timer here: the foreground timeout, the
// kill grace, the gate wait, the background startup window and durations.
// Tests drive it by hand; the zero Config uses the wall clock.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
