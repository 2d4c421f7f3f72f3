package terminal

import (
	"context"
	"sync"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

// Manager owns the terminal of one hub (one geturl adapter): the
// machine-wide foreground gate, the registry of background processes, and
// shutdown. Sessions get Runners from it.
type Manager struct {
	cfg  Config
	gate *Gate

	ctx    context.Context // ends at Shutdown
	cancel context.CancelFunc

	mu      sync.Mutex
	closed  bool
	bg      map[*background]struct{}
	bgCount int            // tracked plus reserved background processes
	wg      sync.WaitGroup // job and supervisor goroutines
}

// NewManager returns a Manager; zero fields of cfg take their Defaults.
func NewManager(cfg Config) *Manager {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{
		cfg:    cfg,
		gate:   NewGate(cfg.ForegroundSlots, cfg.GateQueue, cfg.Clock),
		ctx:    ctx,
		cancel: cancel,
		bg:     map[*background]struct{}{},
	}
}

// Config returns the effective configuration (defaults filled in), for
// route parameter specs that state the limits.
func (m *Manager) Config() Config { return m.cfg }

// Gate is the machine-wide foreground gate.
func (m *Manager) Gate() *Gate { return m.gate }

// Runner returns the terminal of one session, working in scope.
func (m *Manager) Runner(scope *sandbox.Scope) *Runner {
	return &Runner{m: m, scope: scope, bg: map[*background]struct{}{}}
}

// Shutdown stops the terminal: no new command is accepted, queued ones
// give up, and every process tree still running — foreground commands and
// background processes of every session — gets SIGTERM, then SIGKILL after
// KillGrace. It returns when all of them are reaped, or with ctx's error
// when ctx ends first. Background processes do not outlive the adapter
// that started them (nor the hub: if it is killed without a shutdown, the
// reapers kill their trees).
func (m *Manager) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	var procs []*proc
	for b := range m.bg {
		procs = append(procs, b.p)
	}
	m.mu.Unlock()
	m.cancel() // foreground jobs and launches in their startup window stop
	for _, p := range procs {
		p.stop()
	}
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// track counts a goroutine that Shutdown must wait for; false once the
// manager is shut down.
func (m *Manager) track() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.wg.Add(1)
	return true
}

func errShuttingDown() *Error {
	return &Error{Code: CodeShuttingDown, Detail: "the terminal is shutting down", Retryable: false}
}
