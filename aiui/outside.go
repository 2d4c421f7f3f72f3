package aiui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
)

// readControl reads the control file, refusing one that is not private.
func readControl(d hub.Dirs) (ControlFile, error) {
	var cf ControlFile
	data, err := hub.ReadPrivateFile(ControlPath(d), maxControlFile)
	if err != nil {
		return cf, err
	}
	if err := json.Unmarshal(data, &cf); err != nil || cf.Port == 0 || cf.Key == "" {
		return cf, fmt.Errorf("unreadable %s", ControlPath(d))
	}
	return cf, nil
}

// outsideBackend is the live backend another process runs on port (`hub
// aiui mcp`'s in-process one, or `hub aiui serve`), or nil.
func outsideBackend(ctx context.Context, d hub.Dirs, port int) *Client {
	cl, err := Locate(ctx, d)
	if err != nil || cl.Base != NewClient(port, "").Base {
		return nil
	}
	return cl
}

// findOutside returns the backend started outside the hub that holds the
// port, or the port's listener when it came free meanwhile; neither when
// nothing it can follow shows up within the follow timing's Settle (a
// face's backend started beside a starting hub binds the port a moment
// before it writes the control file), or ctx ends. When
// the port is another user's, or becomes so meanwhile, it returns the
// port walk's *hub.HeldError at once, for Serve to fail with: whatever
// listens there is no backend of ours to follow or to wait for, and asking
// it would hand it the control file's key.
func (s *Server) findOutside(ctx context.Context, env *adapters.Env) (cl *Client, ln net.Listener, held error) {
	port := s.cfg.Port
	if ln, held = listenOwn(port); ln != nil || held != nil {
		return nil, ln, held
	}
	if cl = outsideBackend(ctx, env.Dirs, port); cl != nil {
		return cl, nil, nil
	}
	env.Log.Info("the port is taken, and no aiui backend this hub can find holds it (yet); waiting for one", "port", port)
	env.Follow.Await(ctx, func() bool {
		if ln, held = listenOwn(port); ln != nil || held != nil {
			return true
		}
		cl = outsideBackend(ctx, env.Dirs, port)
		return cl != nil
	})
	return cl, ln, held
}

// listenOwn binds port; when another user holds it, it returns the port
// walk's error saying so (hub.ErrPortHeld) instead: then nothing on the
// port is ours to look for.
func listenOwn(port int) (ln net.Listener, held error) {
	ln, _, err := hub.Listen([]int{port})
	if errors.Is(err, hub.ErrPortHeld) {
		return nil, err
	}
	return ln, nil
}

// portHolder is the backend on port when one holds it or is starting there
// (it binds the port a moment before it writes the control file), waiting
// up to timing's Settle; nil when the port is, or comes, free, or another
// user holds it (no backend of ours: starting one then fails naming that
// user), or nothing that holds it shows up. A face starting its own backend uses
// that one instead: its own, on another port, would be a second backend
// pages do not reach.
func portHolder(ctx context.Context, timing adapters.FollowTiming, d hub.Dirs, port int) *Client {
	if port == 0 {
		return nil
	}
	if noneOfOurs(port) {
		return nil
	}
	cl := outsideBackend(ctx, d, port)
	if cl == nil {
		timing.Await(ctx, func() bool {
			if noneOfOurs(port) {
				return true
			}
			cl = outsideBackend(ctx, d, port)
			return cl != nil
		})
	}
	return cl
}

// noneOfOurs reports whether port is free (bound and let go) or another
// user's: either way no backend of ours holds it.
func noneOfOurs(port int) bool {
	ln, held := listenOwn(port)
	if ln != nil {
		ln.Close()
	}
	return ln != nil || held != nil
}

// followOutside is the hub's Serve while a backend started outside the hub
// holds the configured port. Pages dial that port and reach that backend,
// and every face and shell command finds it through the control file, so a
// second backend on another port would serve nobody, and failing would
// stop the whole hub over a port that is in good hands. The adapter reports
// that backend's port instead, and returns the port's listener once it is
// free, for Serve to serve on; nil when ctx ends, or when what holds the
// port is no longer an aiui backend it knows of. ready is env.Ready the
// first time, nil after.
//
// Whether the port is free is the bind itself, not the control file: a
// later backend on another port (`hub aiui serve` picks any) takes the
// control file while the followed one still holds the port.
func (s *Server) followOutside(ctx context.Context, env *adapters.Env, cl *Client, ready func(...int)) net.Listener {
	port := s.cfg.Port
	pid, kind := cl.PID, cl.Kind
	s.setFollowing(port, pid, kind)
	env.Log.Info("an aiui backend started outside the hub holds the port; following it instead of failing", "port", port, "pid", pid, "kind", kind)
	s.mu.Lock()
	s.outsideBridge = NewRemoteBridge(env.Dirs)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.st = adapters.Status{Name: "aiui"}
		s.outsideBridge = nil
		s.mu.Unlock()
	}()
	var elsewhere int // the pid the control file names elsewhere, logged once
	ln, _ := adapters.Follow(ctx, env, adapters.Outside[net.Listener]{
		Ports: []int{port},
		Take: func() (net.Listener, bool, error) {
			ln, _, err := hub.Listen([]int{port})
			if err == nil {
				env.Log.Info("the aiui backend started outside the hub stopped; the hub binds its own", "port", port, "pid", pid)
			}
			return ln, err == nil, nil
		},
		Check: func(context.Context) bool {
			cf, err := readControl(env.Dirs)
			switch {
			case err == nil && cf.Port == port && cf.PID != pid && hub.PIDAlive(cf.PID):
				// handed over: another backend (a face's revived one) holds it now
				pid, kind = cf.PID, cf.Kind
				s.setFollowing(port, pid, kind)
				env.Log.Info("another aiui backend took the port over; following it", "port", port, "pid", pid, "kind", kind)
			case hub.PIDAlive(pid):
				if err == nil && cf.Port != port && cf.PID != elsewhere {
					elsewhere = cf.PID
					env.Log.Info("the control file names a backend on another port; the followed one still holds the port", "port", port, "pid", pid, "other", cf.Port)
				}
			default:
				env.Log.Warn("the aiui backend the hub followed is gone, and something else holds the port", "port", port, "pid", pid)
				return true
			}
			return false
		},
	}, ready)
	return ln
}

// setFollowing is the status while following pid on port.
func (s *Server) setFollowing(port, pid int, kind string) {
	note := fmt.Sprintf("following the aiui backend on port %d (pid %d, started by `hub aiui %s`), which pages reach; the hub takes over when it stops", port, pid, kind)
	s.mu.Lock()
	s.st = adapters.Status{Name: "aiui", Ports: []int{port}, Note: note}
	s.mu.Unlock()
}
