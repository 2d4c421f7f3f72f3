package stitchslop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/ws"
)

// Factory registers the stitchslop adapter, with its hooks (hooks.go).
func Factory() adapters.Factory {
	f := adapters.FactoryFor("stitchslop", NewConfig, func(cfg *Config) (adapters.Adapter, error) {
		return New(Options{Origin: cfg.Origin, Ports: cfg.Ports, ConfigDir: cfg.ConfigDir, FollowOutside: true})
	}, func(adapters.CommandEnv) *cli.Command { return Command() })
	f.Remote, f.Face = remote, &hubFaceSpec
	return f
}

var _ adapters.Adapter = (*Server)(nil)

// Server is one Stitch Slop bridge: the page WebSocket, pairing, the control
// plane on the same port, and the state the MCP face reads.
type Server struct {
	opts     Options
	origin   string // normalised --origin
	policy   *hub.OriginPolicy
	refusals refusalLog
	control  hub.KeyGate // the §4.3 checks in front of every control route

	// authMu serialises handshake decisions (busy vs take over, redeem).
	authMu sync.Mutex
	// callTurn lets one command at a time reach the page (a semaphore, so
	// a caller waiting its turn can give up).
	callTurn chan struct{}

	mu            sync.Mutex
	log           *slog.Logger
	env           *adapters.Env
	pages         *ws.Endpoint // the page WebSocket of the current run
	pairings      *pairingStore
	configDir     string
	running       bool
	stopping      <-chan struct{} // closed when the current run is told to stop
	port          int
	key           string
	armed         string // the one-time token currently armed, if any
	page          *pageConn
	tools         []PageTool
	dropped       []DroppedTool
	attachedCh    chan struct{} // closed while a page is attached
	pending       map[int64]*pendingCall
	nextID        int64
	listeners     map[int]func()
	nextListener  int
	sessions      int           // MCP sessions of this process's face
	faces         int           // follower faces attached to GET /events
	outside       *sessionFile  // the bridge started elsewhere this one follows (followOutside)
	outsideBridge *RemoteBridge // and its tab's tools, for geturl's plugin=stitchslop
	skipped       []hub.Skipped // ports of the list in use when this run bound its own
	rev           uint64        // bumped on every attach, tool-list revision and detach
	lastActivity  time.Time
}

// New builds a bridge from opts; it binds nothing until Serve.
func New(opts Options) (*Server, error) {
	opts.defaults()
	origin, ok := hub.NormalizeOrigin(opts.Origin)
	if !ok {
		return nil, fmt.Errorf("origin: must be an origin like https://example.com, got %q", opts.Origin)
	}
	s := &Server{
		opts:       opts,
		origin:     origin,
		policy:     hub.NewOriginPolicy(origin).Lenient(), // §2.2: case-insensitive, trailing slash ignored
		armed:      opts.Token,
		attachedCh: make(chan struct{}),
		callTurn:   make(chan struct{}, 1),
		pending:    map[int64]*pendingCall{},
		listeners:  map[int]func(){},
		log:        slog.New(slog.DiscardHandler),
	}
	s.control = hub.KeyGate{Header: KeyHeader, Key: s.Key, Port: s.Port, Hint: "(a stale session file?)"}
	return s, nil
}

// Origin is the normalised allowed origin.
func (s *Server) Origin() string { return s.origin }

// resolveConfigDir expands the config dir against home.
func (s *Server) resolveConfigDir(home string) string {
	return hub.ExpandHome(s.opts.ConfigDir, home)
}

// Serve binds 127.0.0.1 on the first free port, writes the session file,
// reports Ready and serves the page WebSocket and the control plane until
// ctx is done. It closes every page socket and fails every pending call
// before returning.
func (s *Server) Serve(ctx context.Context, env *adapters.Env) error {
	log := env.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := s.resolveConfigDir(env.Dirs.Home)
	if err := hub.EnsurePrivateDir(dir); err != nil {
		return fmt.Errorf("config dir %s: %w", dir, err)
	}
	store := &pairingStore{dir: dir}
	if err := store.tightenMode(); err != nil {
		log.Warn("cannot make pairing.json private (0600)", "err", err)
	}
	if _, err := store.load(); err != nil {
		log.Warn("pairing.json unreadable; treating it as empty ("+unreadableFate(err)+")", "err", err)
	}
	ready := env.Ready
	if s.opts.FollowOutside {
		r, err := FindRemote(ctx, dir, s.origin, 0) // it answered: not a leftover file
		if err != nil {
			r = awaitStarting(ctx, env.Follow, log, dir, s.origin, s.opts.Ports)
		}
		if r != nil {
			s.followOutside(ctx, env, log, dir, r, ready)
			if ctx.Err() != nil {
				return nil
			}
			ready = nil // reported once per Serve; Status has the port now
		}
		if ctx.Err() != nil {
			return nil // stopped while waiting: bind nothing
		}
	}
	ln, port, skipped, err := hub.Walk(s.opts.Ports)
	if err != nil {
		return s.walkError(err)
	}
	key := hub.RandomToken(32)
	sess := sessionFile{Port: port, Key: key, Origin: s.origin, PID: os.Getpid(), Protocol: ProtocolVersion, StartedAt: time.Now().UTC()}
	if err := writeSession(dir, sess); err != nil {
		ln.Close()
		return fmt.Errorf("writing the session file: %w", err)
	}
	// The file goes when the listener closes, before the port is released:
	// while we hold the port no other bridge can bind it and write its own
	// session-<port>.json, so the pid check cannot race with one (§4.1).
	// Until then it is kept in place.
	keeper := &sessionKeeper{dir: dir, sess: sess}
	ln = &sessionListener{Listener: ln, remove: keeper.remove}
	defer ln.Close()
	keepCtx, stopKeeping := context.WithCancel(ctx)
	defer stopKeeping()
	env.Guard.Go("stitchslop session file", func() { keeper.keep(keepCtx, sessionCheck, log) })

	s.mu.Lock()
	s.log, s.env, s.pairings, s.configDir = log, env, store, dir
	s.port, s.key, s.running, s.stopping = port, key, true, ctx.Done()
	s.skipped = skipped
	sockets := &ws.Sockets{}
	s.pages = s.pageEndpoint(sockets, env)
	s.mu.Unlock()

	log.Info("stitchslop bridge listening", "addr", fmt.Sprintf("%s:%d", hub.LoopbackHost, port),
		"origin", s.origin, "pid", os.Getpid(), "configDir", dir)
	if note := s.note(); note != "" {
		log.Warn(note)
	}
	if ready != nil {
		ready(port)
	}
	err = hub.ServeHTTP(ctx, ln, s, sockets, log)
	s.refusals.flush() // the refusal summaries still due

	s.mu.Lock()
	s.running = false
	p := s.page
	s.mu.Unlock()
	if p != nil {
		s.detach(p, "bridge stopped")
	}
	return err
}

// Status is the adapter's snapshot for `hub status`.
func (s *Server) Status() adapters.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := adapters.Status{PageAttached: s.page != nil, AgentSessions: s.sessions + s.faces, LastActivity: s.lastActivity}
	switch {
	case s.running:
		st.Ports = []int{s.port}
	case s.outside != nil:
		st.Ports = []int{s.outside.Port}
	}
	st.Note = s.noteLocked()
	st.Dir = s.statusDirLocked()
	return st
}

// pairingNote says, for a bridge's last words (§2.8), whether starting
// again needs a token: it does not once a page has paired.
func (s *Server) pairingNote() string {
	s.mu.Lock()
	store := s.pairings
	s.mu.Unlock()
	if store != nil && store.Paired(s.origin) {
		return "the pairing is kept, so starting again needs no token"
	}
	return "no page has paired with it, so starting again needs a token"
}

// note says what the user must do, if anything.
func (s *Server) note() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.noteLocked()
}

func (s *Server) noteLocked() string {
	if o := s.outside; o != nil {
		return fmt.Sprintf("following the bridge on port %d (pid %d) started outside the hub, which serves this origin's tab; the hub takes over when it stops", o.Port, o.PID)
	}
	var notes []string
	if s.running && len(s.skipped) > 0 {
		// The tab dials the list in order (§2.1): whatever holds an
		// earlier port answers it first.
		why := make([]string, len(s.skipped))
		for i, sk := range s.skipped {
			why[i] = sk.String()
		}
		notes = append(notes, fmt.Sprintf("took port %d because %s; the tab dials those first", s.port, strings.Join(why, ", ")))
	}
	if s.armed == "" && s.pairings != nil && !s.pairings.Paired(s.origin) {
		notes = append(notes, "needs a token: run 'hub stitchslop pair' (token from STITCHSLOP_TOKEN or stdin)")
	}
	return strings.Join(notes, "; ")
}

// walkError adds to a refused port walk what the user can do. A port held
// by another user stops the walk (hub.Walk): the tab dials 8787 first and
// walks on in order, so a bridge on a later port would leave the tab
// handing that user its credential before ever reaching ours.
func (s *Server) walkError(err error) error {
	var held *hub.HeldError
	if !errors.As(err, &held) || len(s.opts.Ports) < 2 {
		return err
	}
	return fmt.Errorf("%w; the Stitch Slop tab dials %s in that order and would reach it first, so the bridge will not take a later port: free it and start again, or pin a port with --port (adapters.stitchslop.ports under the hub)",
		err, hub.FormatPorts(s.opts.Ports))
}

// agentActivity records agent activity for status and the lifecycle.
func (s *Server) agentActivity() {
	s.mu.Lock()
	s.lastActivity = time.Now()
	env := s.env
	s.mu.Unlock()
	if env != nil {
		env.Activity.AgentActivity()
	}
}

// Subscribe registers fn to run whenever the tool list changes (page attach,
// revised list, detach). It returns the cancel function.
func (s *Server) Subscribe(fn func()) func() {
	s.mu.Lock()
	id := s.nextListener
	s.nextListener++
	s.listeners[id] = fn
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.listeners, id)
		s.mu.Unlock()
	}
}

func (s *Server) notifyToolsChanged() {
	s.mu.Lock()
	s.rev++
	fns := make([]func(), 0, len(s.listeners))
	for _, fn := range s.listeners {
		fns = append(fns, fn)
	}
	s.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// attached returns a channel that is closed while a page is attached, and
// whether one is attached now.
func (s *Server) attached() (<-chan struct{}, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attachedCh, s.page != nil
}

// Tools returns a copy of the page's sanitised tool list.
func (s *Server) Tools() ([]PageTool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]PageTool(nil), s.tools...), s.page != nil
}

// Port is the bound port (0 before Serve).
func (s *Server) Port() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.port
}

// Key is the control-plane key of this run.
func (s *Server) Key() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.key
}

// ArmToken arms a one-time token at run time (control plane /pair,
// `hub stitchslop pair`). A token already redeemed is refused.
func (s *Server) ArmToken(token string) error {
	if token == "" || len(token) > 512 {
		return fmt.Errorf("token must be 1..512 characters")
	}
	s.mu.Lock()
	store := s.pairings
	s.mu.Unlock()
	if store != nil && store.Spent(token) {
		return errTokenSpent
	}
	s.mu.Lock()
	s.armed = token
	s.mu.Unlock()
	s.log.Info("one-time token armed", "origin", s.origin)
	return nil
}

// sessionAdd counts an MCP session for status.
func (s *Server) sessionAdd(d int) {
	s.mu.Lock()
	s.sessions += d
	s.mu.Unlock()
}
