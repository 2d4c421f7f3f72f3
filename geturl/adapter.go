package geturl

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/geturl/companion"
	"github.com/hubdev/hub/geturl/control"
	"github.com/hubdev/hub/geturl/engine/filechange"
	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/engine/terminal"
	"github.com/hubdev/hub/geturl/gateway"
	"github.com/hubdev/hub/geturl/kernel"
	"github.com/hubdev/hub/geturl/mutation"
	"github.com/hubdev/hub/geturl/plugin"
	"github.com/hubdev/hub/geturl/plugin/bridges"
	"github.com/hubdev/hub/geturl/plugin/hubstatus"
	"github.com/hubdev/hub/geturl/plugin/opencode"
	"github.com/hubdev/hub/geturl/plugin/pluginhost"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/session"
	"github.com/hubdev/hub/geturl/tunnel"
	"github.com/hubdev/hub/hub"
)

// Factory registers the geturl adapter.
func Factory() adapters.Factory {
	return adapters.FactoryFor("geturl", NewConfig, func(cfg *Config) (adapters.Adapter, error) {
		s := New(cfg)
		s.FollowOutside = true
		return s, nil
	}, Command)
}

var _ adapters.Adapter = (*Server)(nil)

// Server is the geturl bridge: the data plane agents fetch and the operator
// control plane, each on its own loopback port. The session manager (and
// so every live capability URL, and every session's intent journal)
// outlives one run of Serve: a supervisor restart of the adapter does not
// invalidate what the agent holds, and a journaled URL fetched again after
// one still runs once.
type Server struct {
	cfg      *Config
	kernel   *kernel.Kernel
	host     *mutation.Host   // the mutation kernel: /w /e /a /x /s /b /j
	catalog  *pluginhost.Host // /k: what it lists and runs
	tunnel   *tunnel.Manager
	activity *control.Activity
	logs     *filechange.LogKey // signs crash logs; its key is loaded by Serve

	// FollowOutside (the hub's adapter) follows a geturl started outside
	// the hub that holds the state directory instead of failing
	// (outside.go).
	FollowOutside bool

	mu      sync.Mutex
	outside *control.File // the geturl followed (FollowOutside), while it runs
	mgr     *session.Manager
	hub     adapters.HubView // the hub this run serves in (nil: alone)
	running bool
	ports   []int
	lastAt  time.Time            // the last authenticated agent request
	agentAt map[string]time.Time // session id → its last request (touch)
}

// New builds the bridge; it binds nothing until Serve and connects to
// nothing (the OpenCode plugin is lazy).
func New(cfg *Config) *Server {
	s, err := newServer(cfg)
	if err != nil { // only a programming error: duplicate plugin ids
		panic(err)
	}
	return s
}

// newServer builds the bridge with extra plugins (tests add their own).
func newServer(cfg *Config, extra ...plugin.Plugin) (*Server, error) {
	s := &Server{cfg: cfg, tunnel: &tunnel.Manager{}, activity: control.NewActivity(), logs: &filechange.LogKey{}}
	s.host = mutation.NewHost(mutation.Options{Gate: &filechange.Gate{}, Logs: s.logs, Terminal: &terminal.Config{}, Changed: s.noteChange})
	// The hub's bridges are plugins too; each is listed only while geturl
	// runs under a hub that has it enabled.
	plugins := append([]plugin.Plugin{hubstatus.New(s.hubView)}, bridges.All(s.hubView)...)
	if oc, err := cfg.OpenCode.Effective(nil); err == nil && oc.Enabled {
		plugins = append(plugins, opencode.New(oc, opencode.Options{}))
	}
	catalog, err := pluginhost.New(s.host, append(plugins, extra...)...)
	if err != nil {
		return nil, err
	}
	s.catalog = catalog
	s.kernel = kernel.New(kernel.Options{Plugins: catalog, Mutations: s.host})
	return s, nil
}

// hubView is the hub of the current run, for the hub-status and bridge
// plugins.
func (s *Server) hubView() adapters.HubView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hub
}

// recoverPatches rolls back, in every project, a patch the last run was
// cut short in (a crash, kill -9), before any agent reads the project.
func recoverPatches(projects []session.ProjectView, key *filechange.LogKey, log *slog.Logger) {
	for _, p := range projects {
		restored, err := filechange.Recover(p.Root, key)
		switch {
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			log.Error("a patch interrupted by a crash could not be rolled back; the project's mutations are refused until it is", "project", p.Name, "err", err)
		case len(restored) > 0:
			log.Warn("rolled back a patch interrupted by a crash", "project", p.Name, "files", len(restored))
		}
	}
}

// StateDir is where geturl keeps its registry and control file.
func StateDir(d hub.Dirs) string { return control.StateDir(d) }

// manager opens the registry on the first Serve.
func (s *Server) manager(env *adapters.Env) (*session.Manager, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mgr != nil {
		return s.mgr, nil
	}
	var seed []session.Project
	for _, p := range s.cfg.Projects {
		seed = append(seed, session.Project{Name: p.Name, Root: hub.ExpandHome(p.Root, env.Dirs.Home), Write: p.Write, Terminal: p.Terminal, Bridges: p.Bridges})
	}
	mgr, err := session.Open(session.Options{Path: filepath.Join(StateDir(env.Dirs), "registry.json"), Seed: seed, Log: env.Log})
	if err != nil {
		return nil, err
	}
	s.mgr = mgr
	return mgr, nil
}

// Serve binds the data plane and the control plane on 127.0.0.1, writes
// the control file the operator CLI finds them by, and serves until ctx is
// done.
func (s *Server) Serve(ctx context.Context, env *adapters.Env) error {
	ready := env.Ready
	lock, err := lockStateDir(env.Dirs)
	var busy *stateBusyError
	if s.FollowOutside && errors.As(err, &busy) && busy.holder == nil {
		if lock, err = awaitHolder(ctx, env, busy); ctx.Err() != nil {
			if lock != nil {
				lock.Close()
			}
			return nil
		}
	}
	if s.FollowOutside && errors.As(err, &busy) && busy.holder != nil {
		lock, err = s.followOutside(ctx, env, busy, ready)
		if lock == nil && err == nil {
			return nil // ctx ended
		}
		ready = nil // reported once per Serve; Status has the ports now
	}
	if err != nil {
		return err
	}
	defer lock.Close()
	mgr, err := s.manager(env)
	if err != nil {
		return err
	}
	// The key of the crash logs outlives the process: a patch the last
	// run was cut short in is recovered by this one.
	logKey, err := filechange.LoadLogKey(filepath.Join(StateDir(env.Dirs), "crashlog.key"))
	if err != nil {
		return fmt.Errorf("the crash-log key: %w", err)
	}
	s.logs.Set(logKey)
	recoverPatches(mgr.Projects(), s.logs, env.Log)
	dataLn, dataPort, err := hub.Listen([]int{s.cfg.Port})
	if err != nil {
		return fmt.Errorf("data plane: %w", err)
	}
	ctrlLn, ctrlPort, err := hub.Listen([]int{s.cfg.ControlPort})
	if err != nil {
		dataLn.Close()
		return fmt.Errorf("control plane: %w", err)
	}
	key := hub.RandomToken(32)
	cf := control.File{PID: os.Getpid(), Port: dataPort, ControlPort: ctrlPort, Key: key}
	if err := control.WriteFile(env.Dirs, cf); err != nil {
		dataLn.Close()
		ctrlLn.Close()
		return fmt.Errorf("writing the control file: %w", err)
	}
	defer control.RemoveFile(env.Dirs, cf.PID)

	s.mu.Lock()
	s.running, s.ports, s.hub = true, []int{dataPort, ctrlPort}, env.Hub
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
	}()

	s.tunnel.Target, s.tunnel.Log = fmt.Sprintf("http://%s:%d", hub.LoopbackHost, dataPort), env.Log
	defer s.tunnel.Stop() // the child points at this run's data plane
	ctl := &control.Plane{Sessions: mgr, Env: env, DataPort: dataPort, ControlPort: ctrlPort, Key: key,
		ConfiguredOrigin: s.cfg.publicOrigin(), PublicOrigin: s.publicOrigin, Kernel: s.kernel, Tunnel: s.tunnel,
		Plugins: s.plugins, Activity: s.activity}
	// The companion's sessions of an earlier run end here, before the data
	// plane serves: no lease outlives the run that kept it.
	comp := companion.Open(companion.Options{Path: filepath.Join(StateDir(env.Dirs), companion.FileName), Sessions: mgr,
		Lease: s.cfg.Companion.lease(), Prompt: ctl.Prompt, ControlPort: ctrlPort, Log: env.Log})
	ctl.Companion = companionPlane{comp}
	gw := gateway.New(gateway.Options{Sessions: comp, Kernel: s.kernel, Port: dataPort,
		PublicOrigin: s.publicOrigin, Logger: env.Log, Observe: s.observe(env)})

	env.Log.Info("geturl listening", "data", fmt.Sprintf("%s:%d", hub.LoopbackHost, dataPort),
		"control", fmt.Sprintf("%s:%d", hub.LoopbackHost, ctrlPort), "publicOrigin", s.cfg.publicOrigin(),
		"projects", len(mgr.Projects()), "sessions", mgr.EnabledCount())
	if ready != nil {
		ready(dataPort, ctrlPort)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The keeper stops before the deferred removal of the control file.
	kept := make(chan struct{})
	hub.Go(ctx, "geturl control file", func() {
		defer close(kept)
		control.KeepFile(ctx, env.Files, env.Dirs, cf, control.CheckInterval, env.Log)
	})
	defer func() { cancel(); <-kept }()
	// The hub's idle rules never end it while a session's URLs could
	// still be used: an agent may come back to them hours later.
	held := make(chan struct{})
	hub.Go(ctx, "geturl session hold", func() {
		defer close(held)
		mgr.HoldWhileLive(ctx, env.Activity.AgentAttached)
	})
	defer func() { cancel(); <-held }()
	swept := make(chan struct{})
	hub.Go(ctx, "geturl companion leases", func() {
		defer close(swept)
		comp.Run(ctx)
	})
	defer func() { cancel(); <-swept }()
	// Mutations run detached from their requests, bounded by this run.
	shutdown := s.host.Run(ctx)
	errc := make(chan error, 2)
	go func() { errc <- hub.ServeHTTP(ctx, dataLn, gw, nil, env.Log) }()
	go func() { errc <- hub.ServeHTTP(ctx, ctrlLn, ctl.Handler(), nil, env.Log) }()
	err = <-errc
	cancel() // one plane stopped: stop the other
	if err2 := <-errc; err == nil {
		err = err2
	}
	gw.FlushLog() // a flood of token guesses keeps its count in the log
	// No handler can start another execution now: wait for the running
	// ones (a foreground command was killed with ctx) and end the
	// terminal's background processes.
	sctx, scancel := context.WithTimeout(context.Background(), shutdownWait)
	defer scancel()
	if serr := shutdown(sctx); serr != nil {
		env.Log.Warn("mutations still running at shutdown", "err", serr)
	}
	return err
}

// companionPlane is the companion as the control plane sees it.
type companionPlane struct{ *companion.Service }

func (c companionPlane) Overview() any { return c.Service.Overview() }

// shutdownWait bounds how long a stopping run waits for its mutations and
// background processes.
const shutdownWait = 20 * time.Second

// observe records an authenticated data-plane request as agent activity
// and in the control page's activity list. It also counts as a page
// attaching: the URL reader is the client this bridge serves, so a hub
// used only through geturl is not idle.
func (s *Server) observe(env *adapters.Env) func(gateway.Event) {
	return func(ev gateway.Event) {
		env.Activity.PageAttached()
		env.Activity.AgentActivity()
		var sessionID string
		if g, ok := ev.Session.(*session.Generation); ok {
			sessionID = g.SessionID()
		}
		s.touch(sessionID)
		e := control.Entry{At: time.Now().Add(-ev.Duration), Capability: ev.Capability.String(), Route: ev.Route, Tool: ev.Tool,
			Status: ev.Status, ErrorCode: ev.ErrorCode, Bytes: ev.Bytes, DurationMS: float64(ev.Duration.Microseconds()) / 1000,
			Call: ev.Intent, Replayed: ev.Replayed}
		if g, ok := ev.Session.(*session.Generation); ok {
			e.Session = g.SessionID()
		}
		s.activity.Add(e)
	}
}

// publicOrigin is where agents reach the data plane from outside: the
// configured origin, else a running managed tunnel's, else "".
func (s *Server) publicOrigin() string {
	if o := s.cfg.publicOrigin(); o != "" {
		return o
	}
	return s.tunnel.Status().Origin
}

// plugins is /k's catalogue, for the control page.
func (s *Server) plugins() []route.PluginSummary {
	list := s.catalog.List()
	if list == nil {
		list = []route.PluginSummary{}
	}
	return list
}

// recentAgent is how long after its last request a session's agent counts
// as active in `hub status` (AGENTS, and PAGE: the URL reader is the
// client this bridge serves).
const recentAgent = 10 * time.Minute

// touch records traffic, and the session's agent as active now.
func (s *Server) touch(session string) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastAt = now
	if session == "" {
		return
	}
	if s.agentAt == nil {
		s.agentAt = map[string]time.Time{}
	}
	s.agentAt[session] = now
	for id, at := range s.agentAt { // bounded by the live sessions
		if now.Sub(at) > recentAgent {
			delete(s.agentAt, id)
		}
	}
}

// activeAgentsLocked counts the sessions with traffic within recentAgent.
func (s *Server) activeAgentsLocked(now time.Time) int {
	n := 0
	for _, at := range s.agentAt {
		if now.Sub(at) <= recentAgent {
			n++
		}
	}
	return n
}

// Status is the adapter's line in `hub status`: the two ports, the
// sessions whose agents were active within recentAgent as agents (and a
// page attached while there is one), the enabled sessions apart, and what
// the operator must do next, if anything.
func (s *Server) Status() adapters.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := adapters.Status{LastActivity: s.lastAt, Note: platformNote(sandbox.Supported(), terminal.Supported())}
	if o := s.outside; o != nil {
		st.Ports, st.Note = []int{o.Port, o.ControlPort}, joinNote(st.Note, outsideNote(o))
		return st
	}
	if !s.running {
		return st
	}
	st.Ports = append([]int(nil), s.ports...)
	if s.mgr != nil {
		st.Sessions = s.mgr.EnabledCount()
		st.AgentSessions = s.activeAgentsLocked(time.Now())
		st.PageAttached = st.AgentSessions > 0
		switch {
		case len(s.mgr.Projects()) == 0:
			st.Note = joinNote(st.Note, "no projects: run 'hub geturl project add DIR'")
		case st.Sessions == 0:
			st.Note = joinNote(st.Note, "no sessions: run 'hub geturl session new --project NAME'")
		}
	}
	if s.cfg.publicOrigin() == "" {
		switch t := s.tunnel.Status(); t.State {
		case tunnel.StateRunning:
			st.Note = joinNote(st.Note, "tunnel: "+t.Origin)
		case tunnel.StateUnavailable:
			st.Note = joinNote(st.Note, "Init URLs are local only (no public_origin; cloudflared not installed)")
		case tunnel.StateFailed:
			st.Note = joinNote(st.Note, "tunnel failed: "+t.Error)
		}
	}
	return st
}

// platformNote is what hub status says of features this OS lacks (each
// error names the OS): empty where everything is available.
func platformNote(missing ...error) string {
	note := ""
	for _, err := range missing {
		if err != nil {
			note = joinNote(note, err.Error())
		}
	}
	return note
}

// joinNote appends one more remark to a status note, "; "-separated so
// two remarks do not read as one sentence.
func joinNote(note, more string) string {
	if note == "" {
		return more
	}
	return note + "; " + more
}
