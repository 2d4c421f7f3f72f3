package pixelle

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
)

// outsideCheck is how often the hub's adapter, reusing a relay started
// outside the hub, checks that it still answers.
var outsideCheck = 2 * time.Second

// outsideRelay reports whether a compatible relay that permits the website
// answers on port: §Setup's "if RELAY is occupied, check /health with
// Origin: WEBSITE … reuse a compatible relay".
func (s *Server) outsideRelay(ctx context.Context, port int) bool {
	hctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	rep, err := (&Client{Relay: "http://" + hub.LoopbackHost + ":" + strconv.Itoa(port)}).Health(hctx, s.Website)
	return err == nil && rep.OK
}

// followOutside is the hub's Serve while a compatible relay started outside
// the hub (`hub pixelle serve`, or any pixelle-relay/0.2 for this website)
// holds the port. The page dials that RELAY and the agent clients find it
// through the hub's status, so the adapter reports that port instead of
// failing (which would stop the whole hub), and returns once the relay no
// longer answers, for Serve to bind its own, or when ctx ends. ready is
// env.Ready the first time, nil after.
func (s *Server) followOutside(ctx context.Context, env *adapters.Env, port int, ready func(...int)) {
	relay := "http://" + hub.LoopbackHost + ":" + strconv.Itoa(port)
	s.mu.Lock()
	s.outside = fmt.Sprintf("reusing the compatible relay at %s started outside the hub (the page and agents use it; the in-process tools need the hub's own); the hub starts its own when it stops", relay)
	s.mu.Unlock()
	env.Log.Info("a compatible pixelle relay started outside the hub holds the port; reusing it instead of failing", "relay", relay)
	if ready != nil {
		ready(port)
	}
	t := time.NewTicker(outsideCheck)
	defer t.Stop()
	for s.outsideRelay(ctx, port) {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
	s.mu.Lock()
	s.outside = ""
	s.mu.Unlock()
	env.Log.Info("the pixelle relay started outside the hub stopped answering; the hub starts its own", "relay", relay)
}
