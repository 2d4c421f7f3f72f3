package pixelle

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/ws"
)

// ProtocolVersion is the compatibility version /health reports. The
// frontend checks this exact value, so it only changes with the contract.
const ProtocolVersion = "0.2.0"

// Contract defaults (the spec's reference values).
const (
	DefaultAuthTimeout    = 5 * time.Second
	DefaultCommandTimeout = 12 * time.Second
	DefaultPairCodeTTL    = 5 * time.Minute
	DefaultSessionTTL     = time.Hour
	DefaultRateWindow     = time.Minute
	DefaultRateLimit      = 12
	DefaultMaxSessions    = 100
	DefaultMaxInFlight    = 20
	DefaultMaxMessage     = 2 << 20
	DefaultPairBodyLimit  = 1 << 10
	DefaultMaxRatePeers   = 1024
	MaxRequestIDLen       = 100
)

// Factory registers the pixelle adapter, with its hooks (hooks.go).
func Factory() adapters.Factory {
	f := adapters.FactoryFor("pixelle", NewConfig, func(cfg *Config) (adapters.Adapter, error) {
		s := New(cfg)
		s.FollowOutside = true
		return s, nil
	}, Command)
	f.Remote, f.Face = remote, &hubFaceSpec
	return f
}

var _ adapters.Adapter = (*Server)(nil)

// Server is the pixelle-relay/0.2 relay as configured: its Config, the
// contract's limits and the clock, which Serve only reads. Each Serve
// builds a fresh relay (relay.go) for what one run holds, sessions,
// connections and credentials, and drops it when it returns, so a
// restart invalidates every credential.
type Server struct {
	cfg     *Config
	website string // cfg.Website normalised; "" when it is no origin (Serve fails)
	policy  *hub.OriginPolicy

	// Limits default to the contract's values; tests shorten them before
	// Serve.
	Limits
	// Now is the clock for code expiry and rate limiting (default time.Now).
	Now func() time.Time
	// FollowOutside (the hub's adapter) reuses a compatible relay that
	// already holds the port instead of failing (outside.go).
	FollowOutside bool

	// cur is the running relay, nil outside Serve: what Status and the
	// in-process ToolBridge (bridge.go) look at.
	cur atomic.Pointer[relay]
	// out is set while Serve follows a relay started outside the hub.
	out atomic.Pointer[following]
}

// Limits are the relay's timings and bounds (DefaultLimits).
type Limits struct {
	AuthTimeout    time.Duration // hello must arrive within this
	CommandTimeout time.Duration // a routed command fails OUTCOME_UNKNOWN after this
	PairCodeTTL    time.Duration // pairing code lifetime
	SessionTTL     time.Duration // a session without a live browser expires after this
	RateWindow     time.Duration // pair attempts are counted over this window
	RateLimit      int           // pair attempts per window per loopback peer
	MaxRatePeers   int           // bound on rate-limit tracking entries
	MaxSessions    int
	MaxInFlight    int // pending commands per session
	MaxMessage     int // WebSocket message limit in bytes
	PairBodyLimit  int64
}

// DefaultLimits are the contract's reference values.
func DefaultLimits() Limits {
	return Limits{
		AuthTimeout:    DefaultAuthTimeout,
		CommandTimeout: DefaultCommandTimeout,
		PairCodeTTL:    DefaultPairCodeTTL,
		SessionTTL:     DefaultSessionTTL,
		RateWindow:     DefaultRateWindow,
		RateLimit:      DefaultRateLimit,
		MaxRatePeers:   DefaultMaxRatePeers,
		MaxSessions:    DefaultMaxSessions,
		MaxInFlight:    DefaultMaxInFlight,
		MaxMessage:     DefaultMaxMessage,
		PairBodyLimit:  DefaultPairBodyLimit,
	}
}

// New builds a relay for cfg (the website and port) with the contract's
// limits. Serve refuses what check refuses.
func New(cfg *Config) *Server {
	s := &Server{cfg: cfg, Limits: DefaultLimits(), Now: time.Now}
	if w, ok := hub.NormalizeOrigin(cfg.Website); ok {
		s.website, s.policy = w, hub.NewOriginPolicy(w)
	}
	return s
}

// check reports why cfg cannot be served: a website that is no exact
// origin, or a port out of range.
func (s *Server) check() error {
	if s.website == "" {
		return fmt.Errorf("website: must be an exact origin like https://pixelle.example, got %q", s.cfg.Website)
	}
	return adapters.ValidatePort("port", s.cfg.Port)
}

// Website is the one browser origin allowed, normalised ("" when the
// configured one is no origin).
func (s *Server) Website() string { return s.website }

// RelayURL is the RELAY value of the relay this Server runs or follows,
// "" while it does neither.
func (s *Server) RelayURL() string {
	if rl := s.cur.Load(); rl != nil {
		return rl.url
	}
	if s.out.Load() != nil {
		return relayURL(s.cfg.Port)
	}
	return ""
}

func relayURL(port int) string {
	return "http://" + hub.LoopbackHost + ":" + strconv.Itoa(port)
}

// Serve binds 127.0.0.1:port, reports Ready and relays until ctx is done.
// All sessions live in memory: a restart invalidates every credential.
func (s *Server) Serve(ctx context.Context, env *adapters.Env) error {
	if err := s.check(); err != nil {
		return err
	}
	ready, want := env.Ready, s.cfg.Port
	ln, port, err := hub.Listen([]int{want})
	if err != nil {
		if !s.FollowOutside || want == 0 || !s.outsideRelay(ctx, want) {
			return err
		}
		if ln = s.followOutside(ctx, env, want, ready); ln == nil {
			return nil // ctx ended
		}
		port, ready = want, nil // ready is reported once per Serve
	}
	sockets := &ws.Sockets{}
	rl := newRelay(s, env, port, sockets)
	s.cur.Store(rl)
	defer s.cur.Store(nil)
	env.Log.Info("pixelle relay listening", "relay", rl.url, "website", s.website)
	if ready != nil {
		ready(port)
	}
	// When ctx ends, agents with a command in flight get its
	// OUTCOME_UNKNOWN result before their sockets close with 1001: a
	// close alone does not say what became of the command.
	serveCtx, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServing()
	env.Guard.Go("pixelle shutdown notice", func() {
		select {
		case <-ctx.Done():
			rl.failPending()
		case <-serveCtx.Done():
		}
		stopServing()
	})
	err = hub.ServeHTTP(serveCtx, ln, &httpHandler{rl}, sockets, env.Log) // every connection's close path ran
	rl.shutdown()
	return err
}

// Status is the snapshot `hub status` shows.
func (s *Server) Status() adapters.Status {
	if f := s.out.Load(); f != nil {
		return adapters.Status{Ports: []int{s.cfg.Port}, Note: f.note}
	}
	if rl := s.cur.Load(); rl != nil {
		return rl.status()
	}
	return adapters.Status{}
}
