package aiui

import (
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lxzan/gws"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/aiui/intent"
	"github.com/hubdev/hub/aiui/tools"
	"github.com/hubdev/hub/hub"
)

// backend is one Serve's state: it lives from bind to shutdown.
type backend struct {
	s       *Server
	cfg     *Config
	env     *adapters.Env
	log     *slog.Logger
	port    int
	pid     int
	started time.Time
	key     string
	cwd     string

	gen     atomic.Int64
	formats atomic.Pointer[channel.Registry]
	deps    *intent.Deps
	dir     *tools.Directory
	outbox  *Outbox
	traces  *traceStore
	conns   *hub.ConnSet

	wsUp    *gws.Upgrader
	toolsUp *gws.Upgrader

	// loops counts the socket read loops, so Serve returns only after
	// every socket's close path (thread teardown, directory drop) ran.
	loops sync.WaitGroup

	mu       sync.Mutex
	sockets  map[*gws.Conn]string // live /ws and /tools sockets → "ws"|"tools"
	activity time.Time

	regPath     string
	controlPath string
}

func newBackend(s *Server, env *adapters.Env, port int) (*backend, error) {
	cwd, _ := os.Getwd()
	b := &backend{s: s, cfg: s.cfg, env: env, log: env.Log, port: port, pid: os.Getpid(), started: time.Now().UTC(),
		cwd: cwd, conns: &hub.ConnSet{}, sockets: map[*gws.Conn]string{}, traces: newTraceStore()}
	b.deps = &intent.Deps{
		NewOpenAI: func() *intent.OpenAI {
			return &intent.OpenAI{BaseURL: b.cfg.TranscribeBaseURL, Key: os.Getenv(b.cfg.APIKeyEnv), KeyEnv: b.cfg.APIKeyEnv}
		},
		TranscribeModel: b.cfg.TranscribeModel,
		CorrectionModel: b.cfg.CorrectionModel,
		RealtimeModel:   b.cfg.RealtimeModel,
		BlobDir:         b.blobDir,
		FinWait:         s.FinWait,
		Realtime:        s.Realtime,
	}
	if b.deps.Realtime == nil {
		b.deps.Realtime = intent.OpenAIRealtime(b.cfg.TranscribeBaseURL)
	}
	reg := s.Formats(b.deps)
	b.formats.Store(&reg)
	b.dir = tools.NewDirectory(env.Log)
	b.dir.CallTimeout = time.Duration(b.cfg.CallTimeoutMS) * time.Millisecond
	b.dir.Debounce = time.Duration(b.cfg.DebounceMS) * time.Millisecond
	var err error
	if b.outbox, err = openOutbox(env.Dirs, b.cfg.PromptRecord, env.Log); err != nil {
		return nil, err
	}
	b.dir.OnChange = b.outbox.PageToolsChanged
	b.wsUp = gws.NewUpgrader(&wsHandler{b: b}, &gws.ServerOption{
		ReadMaxPayloadSize: b.cfg.MaxFrameBytes,
		Recovery:           gws.Recovery,
	})
	b.toolsUp = gws.NewUpgrader(&toolsHandler{b: b}, &gws.ServerOption{
		ReadMaxPayloadSize: b.cfg.MaxMessageBytes,
		Recovery:           gws.Recovery,
	})
	if err := b.writeControlFile(); err != nil {
		return nil, err
	}
	if err := b.writeRegistryFile(); err != nil {
		b.removeControlFile()
		return nil, err
	}
	return b, nil
}

func (b *backend) handler() http.Handler { return b.routes() }

// shutdown runs after the HTTP server stopped: hijacked sockets are closed
// by ServeHTTP; here the directory, faces and files go.
func (b *backend) shutdown() {
	b.dir.Close()
	b.outbox.Close()
	b.removeRegistryFile()
	b.removeControlFile()
}

// serveSocket upgrades with up and runs the socket's read loop, counted
// in b.loops. It is called from the HTTP handler before the hijack, so
// the count is raised while the server still waits for the request.
func (b *backend) serveSocket(w http.ResponseWriter, r *http.Request, up *gws.Upgrader, kind string) {
	b.loops.Add(1)
	c, err := up.Upgrade(w, r)
	if err != nil {
		b.loops.Done()
		b.log.Debug("/"+kind+" upgrade failed", "err", err)
		return
	}
	if !b.track(c, kind) {
		b.loops.Done()
		c.NetConn().Close()
		return
	}
	go func() {
		defer b.loops.Done()
		c.ReadLoop()
	}()
}

func (b *backend) track(c *gws.Conn, kind string) bool {
	if !b.conns.Add(c) {
		return false
	}
	b.mu.Lock()
	b.sockets[c] = kind
	b.mu.Unlock()
	return true
}

func (b *backend) untrack(c *gws.Conn) {
	b.conns.Remove(c)
	b.mu.Lock()
	delete(b.sockets, c)
	b.mu.Unlock()
}

func (b *backend) wsCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, k := range b.sockets {
		if k == "ws" {
			n++
		}
	}
	return n
}

func (b *backend) pageActivity() {
	b.env.Lifecycle.PageAttached("aiui")
	b.touch()
}

func (b *backend) agentActivity() {
	b.env.Lifecycle.AgentActivity("aiui")
	b.touch()
}

func (b *backend) touch() {
	b.mu.Lock()
	b.activity = time.Now()
	b.mu.Unlock()
}

func (b *backend) lastActivity() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.activity
}

// reload rebuilds the format registry, drops every /ws and /tools socket
// with 1012 (service restart) and bumps the generation.
func (b *backend) reload() map[string]any {
	reg := b.s.Formats(b.deps)
	b.formats.Store(&reg)
	gen := b.gen.Add(1)
	b.mu.Lock()
	socks := make([]*gws.Conn, 0, len(b.sockets))
	for c := range b.sockets {
		socks = append(socks, c)
	}
	b.mu.Unlock()
	for _, c := range socks {
		c.SetWriteDeadline(time.Now().Add(time.Second))
		c.WriteClose(1012, []byte("service restart"))
		c.NetConn().Close()
	}
	b.log.Info("aiui channel reloaded", "generation", gen, "socketsDropped", len(socks))
	return map[string]any{"reloaded": true, "generation": gen, "socketsDropped": len(socks)}
}
