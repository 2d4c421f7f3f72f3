package geturl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
)

// outsideCheck is how often the hub's adapter, following a geturl started
// outside the hub, tries to take the state directory over.
var outsideCheck = 2 * time.Second

// outsideSettle bounds how long the hub's adapter, finding the state
// directory locked by a geturl whose control file is not there (yet),
// waits for it: `hub geturl serve` takes the lock a moment before it writes
// the file, and failing then failed the whole hub.
var outsideSettle = 3 * time.Second

// outsidePoll is how often it looks meanwhile.
var outsidePoll = 50 * time.Millisecond

// awaitHolder is lockStateDir again, until the lock is ours or its holder's
// control file says who it is, for up to outsideSettle; the last answer
// then.
func awaitHolder(ctx context.Context, env *adapters.Env, busy *stateBusyError) (*os.File, error) {
	env.Log.Info("the state directory is locked by a geturl not yet known; waiting for it", "dir", busy.dir, "for", outsideSettle)
	var lock *os.File
	var err error = busy
	hub.Settle(ctx, outsidePoll, outsideSettle, func() bool {
		lock, err = lockStateDir(env.Dirs)
		return !errors.As(err, &busy) || busy.holder != nil
	})
	return lock, err
}

// followOutside is the hub's Serve while a geturl started outside the hub
// (`hub geturl serve`) holds the state directory: its control file is
// where `hub geturl` and the operator page find it, and its data plane is
// what the tunnel and the agent's URLs reach, so a second one could only
// fight it over registry.json, and failing would stop the whole hub. The
// adapter reports that one's ports instead, and returns the state
// directory's lock once it has stopped, or nil when ctx ends. ready is
// env.Ready the first time, nil after.
func (s *Server) followOutside(ctx context.Context, env *adapters.Env, busy *stateBusyError, ready func(...int)) (*os.File, error) {
	s.setOutside(busy.holder)
	defer s.setOutside(nil)
	env.Log.Info("a geturl started outside the hub serves its state directory; following it instead of failing",
		"pid", busy.holder.PID, "data", busy.holder.Port, "control", busy.holder.ControlPort)
	defer env.Activity.Following()() // the hub stays to take over (idle rules)
	if ready != nil {
		ready(busy.holder.Port, busy.holder.ControlPort)
	}
	t := time.NewTicker(outsideCheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, nil
		case <-t.C:
		}
		lock, err := lockStateDir(env.Dirs)
		if err == nil {
			env.Log.Info("the geturl started outside the hub stopped; the hub serves its own", "pid", busy.holder.PID)
			return lock, nil
		}
		var again *stateBusyError
		if !errors.As(err, &again) {
			return nil, err
		}
		if again.holder != nil {
			s.setOutside(again.holder) // another took over meanwhile
		}
	}
}

func (s *Server) setOutside(cf *controlFile) {
	s.mu.Lock()
	s.outside = cf
	s.mu.Unlock()
}

// outsideNote is the status note while following cf.
func outsideNote(cf *controlFile) string {
	return fmt.Sprintf("following the geturl started outside the hub (pid %d), which serves this state directory; the hub takes over when it stops", cf.PID)
}
