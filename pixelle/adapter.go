package pixelle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
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

// Factory registers the pixelle adapter.
func Factory() adapters.Factory {
	return adapters.FactoryFor("pixelle", NewConfig, func(cfg *Config) (adapters.Adapter, error) {
		s, err := New(cfg.Website, cfg.Port)
		if err != nil {
			return nil, err
		}
		s.FollowOutside = true
		return s, nil
	}, Command)
}

var _ adapters.Adapter = (*Server)(nil)

// Server is the pixelle-relay/0.2 relay. The exported duration and limit
// fields default to the contract's values; tests shorten them before Serve.
type Server struct {
	// Website is the one browser origin allowed (normalised).
	Website string
	// Port is the port to bind (0 = any free port).
	Port int

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
	// Now is the clock for code expiry and rate limiting (default time.Now).
	Now func() time.Time
	// FollowOutside (the hub's adapter) reuses a compatible relay that
	// already holds Port instead of failing (outside.go).
	FollowOutside bool

	policy *hub.OriginPolicy

	mu       sync.Mutex
	log      *slog.Logger
	refusals *hub.LogThinner // this run's failed logins and refused codes (refusallog.go)
	env      *adapters.Env
	running  bool // between Ready and the end of Serve
	closed   bool // set at shutdown: no new timers or sessions
	port     int
	sessions map[string]*session // by session id
	peers    map[*peer]struct{}  // every upgraded connection
	rate     *rateLimiter
	nextReq  uint64
	nextSess uint64
	lastAct  time.Time
	outside  string // while following a relay started outside the hub: the note saying so
	// outsideBridge drives that relay's canvas for geturl's plugin=pixelle.
	outsideBridge *RemoteBridge

	// The in-process agent's pairing (bridge.go): the session its pair
	// tool paired with and the agent token that pairing issued.
	bridgeSession, bridgeToken string
}

// New builds a relay for website on port with the contract's defaults.
func New(website string, port int) (*Server, error) {
	w, ok := hub.NormalizeOrigin(website)
	if !ok {
		return nil, fmt.Errorf("website: must be an exact origin like https://pixelle.example, got %q", website)
	}
	if err := adapters.ValidatePort("port", port); err != nil {
		return nil, err
	}
	return &Server{
		Website:        w,
		Port:           port,
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
		Now:            time.Now,
	}, nil
}

// RelayURL is the RELAY value for the bound port.
func (s *Server) RelayURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.relayURLLocked()
}

func (s *Server) relayURLLocked() string {
	return "http://" + hub.LoopbackHost + ":" + strconv.Itoa(s.port)
}

// Serve binds 127.0.0.1:Port, reports Ready and relays until ctx is done.
// All sessions live in memory: a restart invalidates every credential.
func (s *Server) Serve(ctx context.Context, env *adapters.Env) error {
	ready := env.Ready
	ln, port, err := hub.Listen([]int{s.Port})
	if err != nil {
		if !s.FollowOutside || s.Port == 0 || !s.outsideRelay(ctx, s.Port) {
			return err
		}
		if ln = s.followOutside(ctx, env, s.Port, ready); ln == nil {
			return nil // ctx ended
		}
		port, ready = s.Port, nil // ready is reported once per Serve
	}
	sockets := &ws.Sockets{}
	h := &httpHandler{s: s, relay: s.start(env, port, sockets)}
	env.Log.Info("pixelle relay listening", "relay", s.RelayURL(), "website", s.Website)
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
			s.failPending()
		case <-serveCtx.Done():
		}
		stopServing()
	})
	err = hub.ServeHTTP(serveCtx, ln, h, sockets, env.Log) // every connection's close path ran
	s.shutdown()
	return err
}

// failPending answers every command in flight with OUTCOME_UNKNOWN (the
// relay is stopping).
func (s *Server) failPending() {
	var o outbox
	s.mu.Lock()
	for _, sess := range s.sessions {
		for id, pe := range sess.pending {
			pe.timer.Stop()
			delete(sess.pending, id)
			o.fail(pe, "OUTCOME_UNKNOWN", msgUnknownShutdown)
		}
	}
	s.mu.Unlock()
	o.flush()
}

// start resets the relay's state for one run on port and returns its
// /relay endpoint.
func (s *Server) start(env *adapters.Env, port int, sockets *ws.Sockets) *ws.Endpoint {
	s.policy = hub.NewOriginPolicy(s.Website)
	s.mu.Lock()
	s.log, s.env, s.port = env.Log, env, port
	s.refusals = newRefusalLog()
	s.sessions = map[string]*session{}
	s.peers = map[*peer]struct{}{}
	s.rate = newRateLimiter(s.RateLimit, s.RateWindow, s.MaxRatePeers)
	s.running, s.closed = true, false
	s.mu.Unlock()
	// Until its hello is accepted a socket is under the shared
	// pre-authentication guard: a small hello-sized message limit instead
	// of MaxMessage, the contract's authentication deadline (close 1008),
	// and a cap on such sockets (HTTP 503 beyond it).
	return sockets.Endpoint(relayHandler{s}, ws.Options{
		MaxPayload: s.MaxMessage, Heartbeat: env.Heartbeat, Log: env.Log,
		PreAuth: ws.PreAuth{Timeout: s.AuthTimeout, OnCrowded: func(w http.ResponseWriter, _ *http.Request) {
			writeError(w, http.StatusServiceUnavailable, "TOO_MANY_CONNECTIONS", "too many connections are waiting to authenticate; retry shortly")
		}},
	})
}

// shutdown clears every timer and forgets every session.
// The summaries of failed logins still due are written now, not lost
// with the process.
func (s *Server) shutdown() {
	s.mu.Lock()
	s.closed, s.running = true, false
	for _, sess := range s.sessions {
		sess.stopTimers()
	}
	s.sessions = map[string]*session{}
	s.peers = map[*peer]struct{}{}
	refusals := s.refusals
	s.mu.Unlock()
	if refusals != nil {
		refusals.Flush()
	}
}

// Status is the snapshot `hub status` shows.
func (s *Server) Status() adapters.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := adapters.Status{LastActivity: s.lastAct}
	if s.outside != "" {
		st.Ports, st.Note = []int{s.Port}, s.outside
		return st
	}
	if s.running {
		st.Ports = []int{s.port}
	}
	for _, sess := range s.sessions {
		if sess.browser != nil {
			st.PageAttached = true
		}
		st.AgentSessions += len(sess.agents)
	}
	if s.running && !st.PageAttached {
		st.Note = "waiting for the Pixelle page: click Connect locally with relay " + s.relayURLLocked()
	}
	return st
}

// touch records activity for Status (caller holds s.mu).
func (s *Server) touchLocked() { s.lastAct = time.Now() }

// errClosed reports a server that is shutting down.
var errClosed = errors.New("relay is shutting down")
