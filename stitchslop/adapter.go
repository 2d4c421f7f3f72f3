package stitchslop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
)

// Factory registers the stitchslop adapter, with its hooks (hooks.go).
func Factory() adapters.Factory {
	f := adapters.FactoryFor("stitchslop", NewConfig, func(cfg *Config) (adapters.Adapter, error) {
		c := *cfg
		c.FollowOutside = true
		return New(&c)
	}, func(adapters.CommandEnv) *cli.Command { return Command() })
	f.Remote, f.Face = remote, &hubFaceSpec
	return f
}

var _ adapters.Adapter = (*Server)(nil)

// Server is one Stitch Slop bridge: its settings, and what outlives a run
// (the armed token, MCP sessions, subscribers). Each Serve builds a fresh
// run (run.go) for the state of that listener: the page, its calls, the
// control key, the refusal log. Status, the MCP face and the in-process
// ToolBridge reach the current run through an atomic pointer, nil between
// runs.
type Server struct {
	cfg    Config // defaults applied; never changed after New
	origin string // normalised cfg.Origin

	cur       atomic.Pointer[run]        // the run serving, nil between runs
	following atomic.Pointer[outsideRun] // the bridge this Serve follows instead (followOutside)
	// callTimeout is cfg.CallTimeout, changeable while running (tests).
	callTimeout atomic.Int64

	mu           sync.Mutex
	dir          string            // the config dir as the last Serve resolved it
	armed        map[string]string // one-time tokens armed now, by site
	sessions     int               // MCP sessions of this process's face
	lastActivity time.Time
	listeners    map[int]func()
	nextListener int
	changed      chan struct{} // closed and replaced at every change fire reports
}

// New builds a bridge from cfg (copied, defaults applied); it binds
// nothing until Serve.
func New(cfg *Config) (*Server, error) {
	c := cfg.withDefaults()
	origin, ok := hub.NormalizeOrigin(c.Origin)
	if !ok {
		return nil, fmt.Errorf("origin: must be an origin like https://example.com, got %q", c.Origin)
	}
	s := &Server{
		cfg:       c,
		origin:    origin,
		armed:     map[string]string{},
		listeners: map[int]func(){},
		changed:   make(chan struct{}),
	}
	s.callTimeout.Store(int64(c.CallTimeout))
	if c.Token != "" {
		s.armed[origin] = c.Token
	}
	return s, nil
}

// Origin is the normalised allowed origin.
func (s *Server) Origin() string { return s.origin }

// Serve binds 127.0.0.1 on the first free port, writes the session file,
// reports Ready and serves the page WebSocket and the control plane until
// ctx is done. It closes every page socket and fails every pending call
// before returning.
func (s *Server) Serve(ctx context.Context, env *adapters.Env) error {
	log := env.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := hub.ExpandHome(s.cfg.ConfigDir, env.Dirs.Home)
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
	s.mu.Lock()
	s.dir = dir
	s.mu.Unlock()
	ready := env.Ready
	if s.cfg.FollowOutside {
		r, err := FindRemote(ctx, dir, s.origin, 0) // it answered: not a leftover file
		if err != nil {
			r = awaitStarting(ctx, env.Follow, log, dir, s.origin, s.cfg.Ports)
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
	ln, port, skipped, err := hub.Walk(s.cfg.Ports)
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
	env.Guard.Go("stitchslop session file", func() { keeper.keep(keepCtx, env.Files, sessionCheck, log) })

	r := newRun(s, env, runPlace{dir: dir, store: store, port: port, key: key, skipped: skipped, stopping: ctx.Done()})
	s.cur.Store(r)
	s.fire() // a face waiting between runs looks again

	log.Info("stitchslop bridge listening", "addr", fmt.Sprintf("%s:%d", hub.LoopbackHost, port),
		"origin", s.origin, "pid", os.Getpid(), "configDir", dir)
	if note := r.note(); note != "" {
		log.Warn(note)
	}
	if ready != nil {
		ready(port)
	}
	err = hub.ServeHTTP(ctx, ln, r, r.sockets, log)
	r.refusals.flush() // the refusal summaries still due
	r.stop()
	s.cur.CompareAndSwap(r, nil)
	s.fire()
	return err
}

// Status is the adapter's snapshot for `hub status`.
func (s *Server) Status() adapters.Status {
	s.mu.Lock()
	st := adapters.Status{AgentSessions: s.sessions, LastActivity: s.lastActivity}
	s.mu.Unlock()
	switch r, o := s.cur.Load(), s.following.Load(); {
	case r != nil:
		attached, faces := r.attachedFaces()
		st.PageAttached = attached
		st.AgentSessions += faces
		st.Ports = []int{r.port}
		st.Note = r.note()
	case o != nil:
		st.Ports = []int{o.sess.Port}
		st.Note = o.note()
	}
	st.Dir = s.statusDir()
	return st
}

// configDir is the config dir the last Serve resolved ("" before any).
func (s *Server) configDir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dir
}

// pairingNote says, for a bridge's last words (§2.8), whether starting
// again needs a token: it does not once a page has paired.
func (s *Server) pairingNote() string {
	if dir := s.configDir(); dir != "" && (&pairingStore{dir: dir}).Paired(s.origin) {
		return "the pairing is kept, so starting again needs no token"
	}
	return "no page has paired with it, so starting again needs a token"
}

// walkError adds to a refused port walk what the user can do. A port held
// by another user stops the walk (hub.Walk): the tab dials 8787 first and
// walks on in order, so a bridge on a later port would leave the tab
// handing that user its credential before ever reaching ours.
func (s *Server) walkError(err error) error {
	var held *hub.HeldError
	if !errors.As(err, &held) || len(s.cfg.Ports) < 2 {
		return err
	}
	return fmt.Errorf("%w; the Stitch Slop tab dials %s in that order and would reach it first, so the bridge will not take a later port: free it and start again, or pin a port with --port (adapters.stitchslop.ports under the hub)",
		err, hub.FormatPorts(s.cfg.Ports))
}

// env is the Env of the current run, or of the bridge this one follows.
func (s *Server) env() *adapters.Env {
	if r := s.cur.Load(); r != nil {
		return r.env
	}
	if o := s.following.Load(); o != nil {
		return o.env
	}
	return nil
}

// noteActivity records agent activity for status.
func (s *Server) noteActivity() {
	s.mu.Lock()
	s.lastActivity = time.Now()
	s.mu.Unlock()
}

// agentActivity records agent activity for status and the lifecycle.
func (s *Server) agentActivity() {
	s.noteActivity()
	if env := s.env(); env != nil {
		env.Activity.AgentActivity()
	}
}

// Subscribe registers fn to run whenever the tool list changes (page attach,
// revised list, detach, a run starting or ending). It returns the cancel
// function.
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

// fire tells every subscriber, and every waiter on changes, that the
// page's state changed.
func (s *Server) fire() {
	s.mu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	fns := make([]func(), 0, len(s.listeners))
	for _, fn := range s.listeners {
		fns = append(fns, fn)
	}
	s.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// changes is closed at the next change fire reports.
func (s *Server) changes() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// attached reports whether a page is attached now.
func (s *Server) attached() bool {
	r := s.cur.Load()
	return r != nil && r.currentPage() != nil
}

// Tools returns a copy of the page's sanitised tool list.
func (s *Server) Tools() ([]PageTool, bool) {
	if r := s.cur.Load(); r != nil {
		return r.Tools()
	}
	return nil, false
}

// Port is the bound port (0 when not serving).
func (s *Server) Port() int {
	if r := s.cur.Load(); r != nil {
		return r.port
	}
	return 0
}

// Key is the control-plane key of the current run ("" when not serving).
func (s *Server) Key() string {
	if r := s.cur.Load(); r != nil {
		return r.key
	}
	return ""
}

// Report builds the status snapshot (GET /status).
func (s *Server) Report() StatusReport {
	if r := s.cur.Load(); r != nil {
		return r.report()
	}
	msg := "The bridge is not running."
	if o := s.following.Load(); o != nil {
		msg = "This bridge is " + o.note() + "."
	}
	return StatusReport{OK: true, Origin: s.origin, Protocol: ProtocolVersion, PID: os.Getpid(), TokenArmed: s.tokenArmed(),
		ArmedSites: s.armedSites(), PairedSites: []string{}, Tools: []string{}, Refusals: []Refusal{}, Agents: []AgentReport{}, Message: msg}
}

// Call sends a command to the page of the current run (see run.Call).
func (s *Server) Call(ctx context.Context, command string, args json.RawMessage) ([]byte, error) {
	r := s.cur.Load()
	if r == nil {
		return nil, ErrNoPage
	}
	return r.Call(ctx, command, args)
}

// waitAttached blocks until a page is attached, d passes or ctx ends,
// across runs.
func (s *Server) waitAttached(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		ch := s.changes()
		if s.attached() {
			return true
		}
		select {
		case <-ch:
		case <-t.C:
			return s.attached()
		case <-ctx.Done():
			return s.attached()
		}
	}
}

// ArmToken arms a one-time token for the bridge's own site at run time
// (control plane /pair, `hub stitchslop pair`). A token already redeemed
// is refused.
func (s *Server) ArmToken(token string) error {
	_, err := s.ArmTokenFor("", token)
	return err
}

// ArmTokenFor arms a one-time token for site (the bridge's own when ""):
// a page of that site may then pair once (see sites.go). It returns the
// site armed.
func (s *Server) ArmTokenFor(site, token string) (string, error) {
	if token == "" || len(token) > 512 {
		return "", fmt.Errorf("token must be 1..512 characters")
	}
	site, err := s.checkSite(site)
	if err != nil {
		return "", err
	}
	if dir := s.configDir(); dir != "" && (&pairingStore{dir: dir}).Spent(token) {
		return "", errTokenSpent
	}
	s.mu.Lock()
	if _, ok := s.armed[site]; !ok && len(s.armed) >= maxArmedSites {
		s.mu.Unlock()
		return "", fmt.Errorf("tokens are armed for %d sites already; let a page pair first", maxArmedSites)
	}
	s.armed[site] = token
	s.mu.Unlock()
	s.logger().Info("one-time token armed", "origin", site)
	return site, nil
}

func (s *Server) pair(_ context.Context, site, token string) (string, error) {
	return s.ArmTokenFor(site, token)
}

// armedFor is the token armed for site ("" for none).
func (s *Server) armedFor(site string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.armed[site]
}

// tokenArmed says whether a token is armed for the bridge's own site.
func (s *Server) tokenArmed() bool { return s.armedFor(s.origin) != "" }

// armedTokens is a copy of the armed tokens, by site.
func (s *Server) armedTokens() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.armed)
}

// armedSites lists the sites a token is armed for, sorted.
func (s *Server) armedSites() []string {
	return append([]string{}, slices.Sorted(maps.Keys(s.armedTokens()))...)
}

// spendArmed disarms token for site if it is the one armed there.
func (s *Server) spendArmed(site, token string) {
	s.mu.Lock()
	if a := s.armed[site]; a != "" && hub.SecretEqual(a, token) {
		delete(s.armed, site)
	}
	s.mu.Unlock()
}

// sessionAdd counts an MCP session for status.
func (s *Server) sessionAdd(d int) {
	s.mu.Lock()
	s.sessions += d
	s.mu.Unlock()
}

// logger is the current run's log (discarding between runs).
func (s *Server) logger() *slog.Logger {
	if r := s.cur.Load(); r != nil {
		return r.log
	}
	if o := s.following.Load(); o != nil {
		return o.log
	}
	return slog.New(slog.DiscardHandler)
}

// voiceDir is the config dir the last Serve resolved: the tab's listen
// lock lives there, next to the session file.
func (s *Server) voiceDir() string { return s.configDir() }
