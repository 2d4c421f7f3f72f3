package aiui

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/aiui/intent"
	"github.com/hubdev/hub/aiui/tools"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/ws"
)

// Pre-authentication limits (ws.PreAuth).
const (
	// MaxHelloBytes bounds a /ws message before its hello is accepted: a
	// hello is the length prefix and a header, with an empty payload.
	MaxHelloBytes = 4 + frame.MaxHeaderBytes
	// MaxFirstToolsMessage bounds a /tools message before the connection's
	// first accepted register or activation. A register carries its whole
	// tool set, so this is larger than a hello, yet far below
	// max_message_bytes.
	MaxFirstToolsMessage = 256 << 10
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
	key     atomic.Pointer[string] // the control key; replaced when its file was exposed
	pkey    atomic.Pointer[string] // the prompt key (POST /prompt); replaced with key
	cwd     string

	gen     atomic.Int64
	formats atomic.Pointer[channel.Registry]
	deps    *intent.Deps
	dir     *tools.Directory
	outbox  *Outbox
	traces  *traceStore
	held    *hub.Budget // what every /ws connection's open threads hold
	// promptBodies bounds the /prompt bodies being read at once: the
	// route has no credential, and each may be max_message_bytes.
	promptBodies *hub.Budget
	origins      *hub.OriginPolicy // browser routes: loopback + configured app origins

	// sockets owns every /ws and /tools socket; ServeHTTP returns only
	// after each one's close path (thread teardown, directory drop) ran.
	sockets *ws.Sockets
	wsEP    *ws.Endpoint
	toolsEP *ws.Endpoint

	mu       sync.Mutex
	activity time.Time

	regPath     string
	regData     []byte // the record as written, for keepFiles
	controlPath string
	controlData []byte // under mu: rewritten with a new key (newControlKey)
}

func newBackend(s *Server, env *adapters.Env, port int) (*backend, error) {
	cwd, _ := os.Getwd()
	b := &backend{s: s, cfg: s.cfg, env: env, log: env.Log, port: port, pid: os.Getpid(), started: time.Now().UTC(),
		cwd: cwd, sockets: &ws.Sockets{}, traces: newTraceStore(), held: hub.NewBudget(channel.DefaultMaxHeldTotal),
		promptBodies: hub.NewBudget(max(64<<20, 2*int64(s.cfg.MaxMessageBytes))),
		origins:      hub.NewOriginPolicy(s.cfg.Origins...).AllowLoopback()}
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
		Guard:           env.Guard,
	}
	if b.deps.Realtime == nil {
		b.deps.Realtime = intent.OpenAIRealtime(b.cfg.TranscribeBaseURL)
	}
	reg := s.Formats(b.deps)
	b.formats.Store(&reg)
	b.dir = tools.NewDirectory(env.Log)
	b.dir.Guard = env.Guard
	b.dir.CallTimeout = time.Duration(b.cfg.CallTimeoutMS) * time.Millisecond
	b.dir.Debounce = time.Duration(b.cfg.DebounceMS) * time.Millisecond
	var err error
	if b.outbox, err = openOutbox(env.Dirs, b.cfg.PromptRecord, env.Log); err != nil {
		return nil, err
	}
	b.dir.OnChange = b.outbox.PageToolsChanged
	// Until a socket's hello (/ws) or first register or activation (/tools)
	// is accepted, the shared pre-authentication guard bounds its messages,
	// its time and the number of such sockets: a peer that has shown
	// nothing must not make the backend allocate MaxFrameBytes.
	b.wsEP = b.sockets.Endpoint(wsHandler{b}, ws.Options{
		MaxPayload: b.cfg.MaxFrameBytes, Heartbeat: env.Heartbeat, Log: env.Log,
		PreAuth: ws.PreAuth{Limit: MaxHelloBytes},
	})
	callLimit := b.callTimeout()
	b.toolsEP = b.sockets.Endpoint(toolsHandler{b}, ws.Options{
		MaxPayload: b.cfg.MaxMessageBytes, Heartbeat: env.Heartbeat, Log: env.Log,
		PreAuth: ws.PreAuth{Limit: min(MaxFirstToolsMessage, b.cfg.MaxMessageBytes)},
		// Every write to a page is bounded by the call timeout: a page that
		// stopped reading must not pin a call's goroutine.
		WriteTimeout: callLimit,
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

// callTimeout bounds a routed page-tool call.
func (b *backend) callTimeout() time.Duration {
	if b.dir.CallTimeout <= 0 {
		return tools.DefaultCallTimeout
	}
	return b.dir.CallTimeout
}

// shutdown runs after the HTTP server stopped: hijacked sockets are closed
// by ServeHTTP; here the directory, faces and files go.
func (b *backend) shutdown() {
	b.dir.Close()
	b.outbox.Close()
	b.removeRegistryFile()
	b.removeControlFile()
}

func (b *backend) pageActivity() {
	b.env.Activity.PageAttached()
	b.touch()
}

func (b *backend) agentActivity() {
	b.env.Activity.AgentActivity()
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
	dropped := b.sockets.CloseAll(1012, "service restart")
	b.log.Info("aiui channel reloaded", "generation", gen, "socketsDropped", dropped)
	return map[string]any{"reloaded": true, "generation": gen, "socketsDropped": dropped}
}

// RecordCheckInterval is how often a running backend with a face or a
// following shell looks for prompts another backend appended to the
// shared record: a prompt delivered there reaches a face here within it.
const RecordCheckInterval = time.Second

// followRecord runs Outbox.Sync every interval while a face or following
// shell is attached, until ctx ends.
func (b *backend) followRecord(ctx context.Context, every time.Duration) {
	followWhileWatched(ctx, every, b.outbox.Watched, b.outbox.Sync)
}

// followWhileWatched calls sync every interval from the moment watched()
// is closed until sync reports nobody watches, then waits for watched()
// again, with no timer: a ticker that ran for as long as the backend did
// woke an idle hub every second to do nothing.
func followWhileWatched(ctx context.Context, every time.Duration, watched func() <-chan struct{}, sync func() bool) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-watched():
		}
		t := time.NewTicker(every)
		for watching := true; watching; {
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
				watching = sync()
			}
		}
		t.Stop()
	}
}
