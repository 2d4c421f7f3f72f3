package geturl

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/geturl/gateway"
	"github.com/hubdev/hub/geturl/kernel"
	"github.com/hubdev/hub/geturl/session"
	"github.com/hubdev/hub/geturl/tunnel"
	"github.com/hubdev/hub/hub"
)

// Factory registers the geturl adapter.
func Factory() adapters.Factory {
	return adapters.FactoryFor("geturl", NewConfig, func(cfg *Config) (adapters.Adapter, error) {
		return New(cfg), nil
	}, Command)
}

var _ adapters.Adapter = (*Server)(nil)

// Server is the geturl bridge: the data plane agents fetch and the operator
// control plane, each on its own loopback port. The session manager (and
// so every live capability URL) outlives one run of Serve: a supervisor
// restart of the adapter does not invalidate what the agent holds.
type Server struct {
	cfg      *Config
	kernel   *kernel.Kernel
	tunnel   *tunnel.Manager
	activity *activityLog
	catalog  kernel.Plugins // what /k lists (nil: no plugins installed)

	mu      sync.Mutex
	mgr     *session.Manager
	running bool
	ports   []int
	lastAt  time.Time // the last authenticated agent request
}

// New builds the bridge; it binds nothing until Serve.
func New(cfg *Config) *Server {
	return &Server{cfg: cfg, kernel: kernel.New(kernel.Options{}), tunnel: &tunnel.Manager{}, activity: newActivityLog()}
}

// StateDir is where geturl keeps its registry and control file.
func StateDir(d hub.Dirs) string { return filepath.Join(d.State, "geturl") }

// manager opens the registry on the first Serve.
func (s *Server) manager(env *adapters.Env) (*session.Manager, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mgr != nil {
		return s.mgr, nil
	}
	var seed []session.Project
	for _, p := range s.cfg.Projects {
		seed = append(seed, session.Project{Name: p.Name, Root: hub.ExpandHome(p.Root, env.Dirs.Home), Write: p.Write, Terminal: p.Terminal})
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
	mgr, err := s.manager(env)
	if err != nil {
		return err
	}
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
	cf := controlFile{PID: os.Getpid(), Port: dataPort, ControlPort: ctrlPort, Key: key}
	if err := writeControlFile(env.Dirs, cf); err != nil {
		dataLn.Close()
		ctrlLn.Close()
		return fmt.Errorf("writing the control file: %w", err)
	}
	defer removeControlFile(env.Dirs, cf.PID)

	s.mu.Lock()
	s.running, s.ports = true, []int{dataPort, ctrlPort}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
	}()

	s.tunnel.Target, s.tunnel.Log = fmt.Sprintf("http://%s:%d", hub.LoopbackHost, dataPort), env.Log
	defer s.tunnel.Stop() // the child points at this run's data plane
	gw := gateway.New(gateway.Options{Sessions: mgr.Sessions(), Kernel: s.kernel, Port: dataPort,
		PublicOrigin: s.publicOrigin, Logger: env.Log, Observe: s.observe(env)})
	ctl := &control{s: s, mgr: mgr, env: env, dataPort: dataPort, ctrlPort: ctrlPort, key: key, ui: newUIAuth(time.Now)}

	env.Log.Info("geturl listening", "data", fmt.Sprintf("%s:%d", hub.LoopbackHost, dataPort),
		"control", fmt.Sprintf("%s:%d", hub.LoopbackHost, ctrlPort), "publicOrigin", s.cfg.publicOrigin(),
		"projects", len(mgr.Projects()), "sessions", mgr.EnabledCount())
	env.Ready(dataPort, ctrlPort)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 2)
	go func() { errc <- hub.ServeHTTP(ctx, dataLn, gw, nil, env.Log) }()
	go func() { errc <- hub.ServeHTTP(ctx, ctrlLn, ctl.handler(), nil, env.Log) }()
	err = <-errc
	cancel() // one plane stopped: stop the other
	if err2 := <-errc; err == nil {
		err = err2
	}
	return err
}

// observe records an authenticated data-plane request as agent activity
// and in the control page's activity list. It also counts as a page
// attaching: the URL reader is the client this bridge serves, so a hub
// used only through geturl is not idle.
func (s *Server) observe(env *adapters.Env) func(gateway.Event) {
	return func(ev gateway.Event) {
		env.Activity.PageAttached()
		env.Activity.AgentActivity()
		s.touch()
		e := activityEntry{At: time.Now().Add(-ev.Duration), Capability: ev.Capability.String(), Route: ev.Route, Tool: ev.Tool,
			Status: ev.Status, ErrorCode: ev.ErrorCode, Bytes: ev.Bytes, DurationMS: float64(ev.Duration.Microseconds()) / 1000}
		if g, ok := ev.Session.(*session.Generation); ok {
			e.Session = g.SessionID()
		}
		s.activity.add(e)
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
func (s *Server) plugins() []kernel.PluginSummary {
	var list []kernel.PluginSummary
	if s.catalog != nil {
		list = s.catalog.List()
	}
	if list == nil {
		list = []kernel.PluginSummary{}
	}
	return list
}

func (s *Server) touch() {
	s.mu.Lock()
	s.lastAt = time.Now()
	s.mu.Unlock()
}

// Status is the adapter's line in `hub status`: the two ports, the live
// sessions as agents, and what the operator must do next, if anything.
func (s *Server) Status() adapters.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := adapters.Status{LastActivity: s.lastAt}
	if !s.running {
		return st
	}
	st.Ports = append([]int(nil), s.ports...)
	if s.mgr != nil {
		st.AgentSessions = s.mgr.EnabledCount()
		switch {
		case len(s.mgr.Projects()) == 0:
			st.Note = "no projects: run 'hub geturl project add DIR'"
		case st.AgentSessions == 0:
			st.Note = "no sessions: run 'hub geturl session new --project NAME'"
		}
	}
	if s.cfg.publicOrigin() == "" {
		switch t := s.tunnel.Status(); t.State {
		case tunnel.StateRunning:
			st.Note = strings.TrimSpace(st.Note + " tunnel: " + t.Origin)
		case tunnel.StateUnavailable:
			st.Note = strings.TrimSpace(st.Note + " Init URLs are local only (no public_origin; cloudflared not installed)")
		case tunnel.StateFailed:
			st.Note = strings.TrimSpace(st.Note + " tunnel failed: " + t.Error)
		}
	}
	return st
}
