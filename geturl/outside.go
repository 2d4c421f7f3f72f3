package geturl

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/geturl/control"
)

// awaitHolder is lockStateDir again, until the lock is ours or its holder's
// control file says who it is (`hub geturl serve` takes the lock a moment
// before it writes the file), for up to the follow timing's Settle; the
// last answer then.
func awaitHolder(ctx context.Context, env *adapters.Env, busy *stateBusyError) (*os.File, error) {
	env.Log.Info("the state directory is locked by a geturl not yet known; waiting for it", "dir", busy.dir)
	var lock *os.File
	var err error = busy
	env.Follow.Await(ctx, func() bool {
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
// adapter follows it (adapters.Follow), reporting that one's ports, and
// returns the state directory's lock once it has stopped, or nil when ctx
// ends.
func (s *Server) followOutside(ctx context.Context, env *adapters.Env, busy *stateBusyError, ready func(...int)) (*os.File, error) {
	s.setOutside(busy.holder)
	defer s.setOutside(nil)
	env.Log.Info("a geturl started outside the hub serves its state directory; following it instead of failing",
		"pid", busy.holder.PID, "data", busy.holder.Port, "control", busy.holder.ControlPort)
	return adapters.Follow(ctx, env, adapters.Outside[*os.File]{
		Ports: []int{busy.holder.Port, busy.holder.ControlPort},
		Take: func() (*os.File, bool, error) {
			lock, err := lockStateDir(env.Dirs)
			if err == nil {
				env.Log.Info("the geturl started outside the hub stopped; the hub serves its own", "pid", busy.holder.PID)
				return lock, true, nil
			}
			var again *stateBusyError
			if !errors.As(err, &again) {
				return nil, false, err
			}
			if again.holder != nil {
				s.setOutside(again.holder) // another took over meanwhile
			}
			return nil, false, nil
		},
	}, ready)
}

func (s *Server) setOutside(cf *control.File) {
	s.mu.Lock()
	s.outside = cf
	s.mu.Unlock()
}

// outsideNote is the status note while following cf.
func outsideNote(cf *control.File) string {
	return fmt.Sprintf("following the geturl started outside the hub (pid %d), which serves this state directory; the hub takes over when it stops", cf.PID)
}
