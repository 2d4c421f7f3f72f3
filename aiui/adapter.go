package aiui

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/aiui/intent"
	"github.com/hubdev/hub/hub"
)

// Factory registers the aiui adapter, with its hooks (hooks.go).
func Factory() adapters.Factory {
	f := adapters.FactoryFor("aiui", NewConfig, func(cfg *Config) (adapters.Adapter, error) {
		return New(cfg), nil
	}, func(adapters.CommandEnv) *cli.Command { return Command() })
	f.Remote, f.Face = remote, &hubFaceSpec
	return f
}

// Kinds of backend (Server.Kind): who started it. The kind goes into the
// registry and control files and /health.
const (
	KindHub   = "hub"
	KindServe = "serve"
	KindMCP   = "mcp"
)

// LoadFormats builds the format registry; reload calls it again. It is the
// seam for custom formats (Go cannot re-import code, so a reload rebuilds
// the registry from what the binary holds and still cycles the sockets).
type LoadFormats func(d *intent.Deps) channel.Registry

// DefaultFormats are text-concat and intent-v1.
func DefaultFormats(d *intent.Deps) channel.Registry {
	return channel.Registry{"text-concat": channel.TextConcat(), "intent-v1": intent.Format(d)}
}

// Server is the aiui channel backend adapter: its configuration, which
// Serve only reads. Each Serve builds a fresh backend (backend.go) for
// what one run holds.
type Server struct {
	cfg *Config
	// Kind is who runs the backend (KindHub from New). Only the hub's
	// adapter follows a backend started outside it on its port;
	// `hub aiui serve` sets KindServe and the MCP face's own KindMCP.
	Kind string
	// Formats is the format-registry seam (default DefaultFormats).
	Formats LoadFormats
	// FallbackAnyPort lets Serve take an OS-assigned port when cfg.Port is
	// busy (used by `hub aiui mcp` when it starts its own backend).
	FallbackAnyPort bool
	// FinWait overrides intent-v1's bounded wait for in-flight seams.
	FinWait time.Duration
	// Realtime is the upstream realtime dialer (nil: none).
	Realtime intent.RealtimeDialer
	// FileCheckInterval is how often the running backend checks its
	// registry record and control file (0: FileCheckInterval).
	FileCheckInterval time.Duration
	// RecordCheckInterval is how often it looks for prompts another
	// backend appended to the shared record (0: RecordCheckInterval).
	RecordCheckInterval time.Duration

	cur atomic.Pointer[backend]
	mu  sync.Mutex
	st  adapters.Status
	// outsideBridge reaches the pages of the backend started outside the
	// hub that this one follows (followOutside), for geturl's plugin=aiui.
	outsideBridge *RemoteBridge
}

var _ adapters.Adapter = (*Server)(nil)

// New builds the backend for cfg as the hub's adapter (Kind KindHub).
func New(cfg *Config) *Server {
	return &Server{cfg: cfg, Kind: KindHub, Formats: DefaultFormats}
}

// Serve binds the backend and serves until ctx is done.
func (s *Server) Serve(ctx context.Context, env *adapters.Env) error {
	ports := []int{s.cfg.Port}
	if s.FallbackAnyPort && s.cfg.Port != 0 {
		ports = append(ports, 0)
	}
	ready := env.Ready
	ln, port, err := hub.Listen(ports)
	for err != nil && s.Kind == KindHub {
		// The hub's adapter follows a backend started outside it on its
		// port (outside.go); anyone else's failure to bind is an error.
		cl, free, held := s.findOutside(ctx, env)
		if held != nil {
			return held // another user's port: nothing there to follow
		}
		if cl != nil {
			free = s.followOutside(ctx, env, cl, ready)
			ready = nil // reported once per Serve; Status has the port now
		}
		if ctx.Err() != nil {
			if free != nil {
				free.Close()
			}
			return nil
		}
		if free != nil {
			ln, port, err = free, s.cfg.Port, nil
			break
		}
		if cl == nil {
			return err
		}
		ln, port, err = hub.Listen(ports)
	}
	if err != nil {
		return err
	}
	b, err := newBackend(s, env, port)
	if err != nil {
		ln.Close()
		return err
	}
	s.cur.Store(b)
	defer s.cur.Store(nil)
	s.mu.Lock()
	s.st = adapters.Status{Name: "aiui", Ports: []int{port}}
	s.mu.Unlock()
	env.Log.Info("aiui channel backend listening", "port", port, "generation", 0)
	if ready != nil {
		ready(port)
	}
	every := s.FileCheckInterval
	if every <= 0 {
		every = FileCheckInterval
	}
	keepCtx, stopKeeping := context.WithCancel(ctx)
	kept := make(chan struct{})
	env.Guard.Go("aiui file keeper", func() {
		defer close(kept)
		b.keepFiles(keepCtx, env.Files, every)
	})
	synced := make(chan struct{})
	env.Guard.Go("aiui record follower", func() {
		defer close(synced)
		b.followRecord(keepCtx, cmp.Or(s.RecordCheckInterval, RecordCheckInterval))
	})
	err = hub.ServeHTTP(ctx, ln, b.handler(), b.sockets, env.Log) // every socket's close path ran
	// The keeper stops before the files go, or it would put them back.
	stopKeeping()
	<-kept
	<-synced
	b.shutdown()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// Status is a cheap snapshot.
func (s *Server) Status() adapters.Status {
	s.mu.Lock()
	st := s.st
	s.mu.Unlock()
	st.Name = "aiui"
	if b := s.cur.Load(); b != nil {
		sum := b.dir.Summary()
		st.PageAttached = sum.Clients > 0 || b.wsEP.Len() > 0
		st.AgentSessions = b.outbox.FaceCount()
		st.LastActivity = b.lastActivity()
	}
	return st
}

// Port is the bound port while serving (0 otherwise).
func (s *Server) Port() int {
	if b := s.cur.Load(); b != nil {
		return b.port
	}
	return 0
}
