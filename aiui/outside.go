package aiui

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
)

// outsideCheck is how often the hub's adapter, following a backend started
// outside the hub, checks that it still runs. It reads the control file
// and the pid only: a request would count as activity there.
var outsideCheck = 2 * time.Second

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

// followOutside is the hub's Serve while a backend started outside the hub
// holds the configured port. Pages dial that port and reach that backend,
// and every face and shell command finds it through the control file, so a
// second backend on another port would serve nobody, and failing would
// stop the whole hub over a port that is in good hands. The adapter reports
// that backend's port instead, and returns once it has stopped (or handed
// the control file to another), for Serve to bind its own, or when ctx
// ends. ready is env.Ready the first time, nil after.
func (s *Server) followOutside(ctx context.Context, env *adapters.Env, cl *Client, ready func(...int)) {
	port := s.cfg.Port
	note := fmt.Sprintf("following the aiui backend on port %d (pid %d, started by `hub aiui %s`), which pages reach; the hub takes over when it stops", port, cl.PID, cl.Kind)
	s.mu.Lock()
	s.st = adapters.Status{Name: "aiui", Ports: []int{port}, Note: note}
	s.mu.Unlock()
	env.Log.Info("an aiui backend started outside the hub holds the port; following it instead of failing", "port", port, "pid", cl.PID, "kind", cl.Kind)
	if ready != nil {
		ready(port)
	}
	t := time.NewTicker(outsideCheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cf, err := readControl(env.Dirs)
		if err != nil || cf.PID != cl.PID || cf.Port != port || !hub.PIDAlive(cf.PID) {
			break
		}
	}
	s.mu.Lock()
	s.st = adapters.Status{Name: "aiui"}
	s.mu.Unlock()
	env.Log.Info("the aiui backend started outside the hub stopped; the hub binds its own", "port", port, "pid", cl.PID)
}
