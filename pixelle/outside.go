package pixelle

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
)

// outsideRelay reports whether a compatible relay that permits the website
// answers on port: §Setup's "if RELAY is occupied, check /health with
// Origin: WEBSITE … reuse a compatible relay".
func (s *Server) outsideRelay(ctx context.Context, port int) bool {
	hctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	rep, err := (&Client{Relay: relayURL(port)}).Health(hctx, s.website)
	return err == nil && rep.OK
}

// followOutside is the hub's Serve while a compatible relay started outside
// the hub (`hub pixelle serve`, or any pixelle-relay/0.2 for this website)
// holds the port. The page dials that RELAY and the agent clients find it
// through the hub's status, so the adapter reports that port instead of
// failing (which would stop the whole hub), and returns the port's
// listener once it is free, for Serve to relay on, or nil when ctx ends.
// ready is env.Ready the first time, nil after.
//
// Whether the port is free is the bind itself: a relay that stops
// answering /health for a while (suspended, or slow) still holds it, and
// taking that for a stop made the adapter fail to bind until it was given
// up on. While it does not answer the status says so; it is never stopped.
func (s *Server) followOutside(ctx context.Context, env *adapters.Env, port int, ready func(...int)) net.Listener {
	relay := relayURL(port)
	reusing := fmt.Sprintf("reusing the compatible relay at %s started outside the hub (the page and agents use it); the hub starts its own when it stops", relay)
	silent := fmt.Sprintf("the relay at %s started outside the hub holds the port but does not answer /health as a compatible relay (suspended?); the hub does not use it, never stops it, and starts its own once the port is free", relay)
	bridge := NewRemoteBridge(env.Dirs, relay)
	note := func(n string) { s.out.Store(&following{note: n, bridge: bridge}) }
	note(reusing)
	defer s.out.Store(nil)
	env.Log.Info("a compatible pixelle relay started outside the hub holds the port; reusing it instead of failing", "relay", relay)
	answering := true
	ln, _ := adapters.Follow(ctx, env, adapters.Outside[net.Listener]{
		Ports: []int{port},
		Take: func() (net.Listener, bool, error) {
			ln, _, err := hub.Listen([]int{port})
			if err == nil {
				env.Log.Info("the pixelle relay started outside the hub stopped; the hub starts its own", "relay", relay)
			}
			return ln, err == nil, nil
		},
		Check: func(ctx context.Context) bool {
			if ok := s.outsideRelay(ctx, port); ok != answering && ctx.Err() == nil {
				answering = ok
				if ok {
					note(reusing)
					env.Log.Info("the pixelle relay started outside the hub answers again; reusing it", "relay", relay)
				} else {
					note(silent)
					env.Log.Warn("the pixelle relay started outside the hub holds the port but does not answer /health; waiting for the port", "relay", relay)
				}
			}
			return false
		},
	}, ready)
	return ln
}

// following is a relay started outside the hub, while Serve follows it.
type following struct {
	note   string        // what Status says about it
	bridge *RemoteBridge // drives its canvas for geturl's plugin=pixelle
}

// followed drives the relay this hub adapter reuses, while it reuses one
// started outside the hub; nil while it relays itself.
func (s *Server) followed() *RemoteBridge {
	if f := s.out.Load(); f != nil {
		return f.bridge
	}
	return nil
}
