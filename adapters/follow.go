package adapters

import (
	"context"
	"time"

	"github.com/hubdev/hub/hub"
)

// A bridge the hub runs may find what it would serve already served by the
// same bridge started outside the hub: `hub <bridge> serve`, a face's own,
// or one that took over from a stopped hub. Pages dial that one and faces
// find it through its files, so a second copy would serve nobody, and
// failing would stop a hub over a port in good hands. The adapter follows
// it instead: it reports that bridge's ports as its own, holds the hub's
// idle rules off, and takes over once that bridge stops. Follow is that
// policy, once for every bridge; a bridge supplies only how to try the
// takeover and how to look at the one it follows.

// FollowTiming paces following. The zero value of a field means its
// default.
type FollowTiming struct {
	// Check is how often a follower tries to take over and looks at the
	// bridge it follows (default 2 s). Looking reads files or asks a
	// health route, never a route that counts as activity there, which
	// would keep that bridge from ever going idle.
	Check time.Duration
	// Settle bounds how long a bridge that finds its port (or state)
	// taken by nothing it can follow waits for the file that names the
	// holder: a bridge binds a moment before it writes that file, and a
	// hub and a standalone started together would otherwise each start
	// one (default 3 s).
	Settle time.Duration
	// Poll is how often it looks meanwhile (default 50 ms).
	Poll time.Duration
}

// Default pacing of FollowTiming.
const (
	DefaultFollowCheck  = 2 * time.Second
	DefaultFollowSettle = 3 * time.Second
	DefaultFollowPoll   = 50 * time.Millisecond
)

func (t FollowTiming) check() time.Duration  { return orDefault(t.Check, DefaultFollowCheck) }
func (t FollowTiming) settle() time.Duration { return orDefault(t.Settle, DefaultFollowSettle) }
func (t FollowTiming) poll() time.Duration   { return orDefault(t.Poll, DefaultFollowPoll) }

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Await calls found every Poll until it reports true, for at most Settle:
// the wait for a bridge still starting. It reports whether found did
// before Settle passed or ctx ended.
func (t FollowTiming) Await(ctx context.Context, found func() bool) bool {
	return hub.Settle(ctx, t.poll(), t.settle(), found)
}

// Outside is a bridge started outside the hub, as an adapter follows it.
type Outside[T any] struct {
	// Ports are that bridge's, reported as the adapter's own.
	Ports []int
	// Take tries to take over what that bridge holds (its port, its
	// state directory's lock). ok means it is now this adapter's, with
	// what it took; an error ends the following. Nil: never tried (the
	// adapter starts afresh once Check says the bridge is gone).
	Take func() (took T, ok bool, err error)
	// Check looks at that bridge between tries; gone means it is no
	// longer one to follow (Follow then returns the zero T). Nil: only
	// Take decides.
	Check func(ctx context.Context) (gone bool)
}

// Follow is the adapter's Serve while o serves in its place: it reports
// o.Ports to ready (when not nil: Ready is called once per Serve), holds
// off the idle rules (the hub stays to take over), and every Check tries
// o.Take, then o.Check. It returns what Take took; the zero T with a nil
// error when the bridge is gone or ctx ended.
func Follow[T any](ctx context.Context, env *Env, o Outside[T], ready func(...int)) (T, error) {
	var zero T
	defer env.Activity.Following()()
	if ready != nil {
		ready(o.Ports...)
	}
	t := time.NewTicker(env.Follow.check())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return zero, nil
		case <-t.C:
		}
		if o.Take != nil {
			took, ok, err := o.Take()
			if err != nil {
				return zero, err
			}
			if ok {
				return took, nil
			}
		}
		if o.Check != nil && o.Check(ctx) {
			return zero, nil
		}
	}
}
