package mutation

import (
	"context"
	"sync"
	"time"

	"github.com/hubdev/hub/geturl/engine/filechange"
	"github.com/hubdev/hub/geturl/engine/terminal"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/hub"
)

// Options configure a Host.
type Options struct {
	// Gate serialises file mutations per project across sessions; share
	// one per process (nil: the Host makes its own).
	Gate *filechange.Gate
	// Logs signs and checks the crash logs of multi-file patches; share
	// one per process (nil: a key made for this process).
	Logs *filechange.LogKey
	// Terminal configures the /x engine; nil leaves the terminal out
	// (/x answers terminal_unavailable). One terminal.Manager serves every
	// session (its foreground gate is machine-wide) for one Run.
	Terminal *terminal.Config
	// PollWait is the wait= a poll URL carries, in milliseconds (default
	// 1000): each poll holds up to that long for the intent to finish.
	PollWait int
	// Changed, when set, is told of every file mutation that succeeded,
	// once, when it finishes (which may be after its request answered):
	// the files it changed, for the operator's activity view.
	Changed func(Change)
}

// Change is one successful file mutation as the operator may see it:
// which files, never their content.
type Change struct {
	Session route.Session
	// Call is the intent's call id, as the request's route.Call.Intent.
	Call string
	// Tool is write, edit or apply_patch.
	Tool string
	// Paths are the files created, replaced or removed, relative to the
	// project root ("src/a.go"), in the order the mutation named them.
	Paths []string
}

// Host is the process-wide half of the mutation kernel: what sessions
// share (the project write gate, the terminal, the project versions that
// decide repeat URLs) and the lifetime that bounds every execution. One
// per process; each session generation brings its own State.
type Host struct {
	gate     *filechange.Gate
	logs     *filechange.LogKey
	termCfg  *terminal.Config
	pollWait int
	changed  func(Change)
	ver      versions

	mu   sync.Mutex
	life context.Context
	term *terminal.Manager // made on first use, shut down with the run
	wg   sync.WaitGroup
}

// NewHost builds the host.
func NewHost(o Options) *Host {
	h := &Host{gate: o.Gate, logs: o.Logs, termCfg: o.Terminal, pollWait: o.PollWait, changed: o.Changed, life: context.Background(), ver: newVersions()}
	if h.gate == nil {
		h.gate = &filechange.Gate{}
	}
	if h.pollWait <= 0 {
		h.pollWait = 1000
	}
	return h
}

// Run makes ctx (the adapter's Serve context) the lifetime of the
// executions started from now on: they are detached from their requests
// and end, at the latest, with it (a running foreground command is
// killed). The returned function is Shutdown; call it once the servers
// have stopped (so no handler can start another) and ctx is done. The
// journals live on (they belong to the session generations), so after a
// restart the same URL still finds its intent.
func (h *Host) Run(ctx context.Context) (shutdown func(context.Context) error) {
	h.mu.Lock()
	h.life = ctx
	h.mu.Unlock()
	return h.Shutdown
}

// Shutdown waits for every execution started so far, then shuts the
// terminal down: every background process still running is killed (they
// do not outlive the adapter that started them). A later /x gets a new
// terminal.
func (h *Host) Shutdown(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	h.mu.Lock()
	term := h.term
	h.term = nil
	h.mu.Unlock()
	if term != nil {
		return term.Shutdown(ctx)
	}
	return nil
}

// terminalManager is the current terminal, nil when none is configured.
func (h *Host) terminalManager() *terminal.Manager {
	if h.termCfg == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.term == nil {
		h.term = terminal.NewManager(*h.termCfg)
	}
	return h.term
}

// spawn runs start on its own goroutine under the current lifetime.
// It ends, too, when st's generation does.
func (h *Host) spawn(st *State, start func(context.Context)) {
	h.mu.Lock()
	life := h.life
	h.wg.Add(1)
	h.mu.Unlock()
	// Under the run's guard: a panic restarts the adapter, not the hub.
	hub.Go(life, "geturl intent", func() {
		defer h.wg.Done()
		ctx, cancel := context.WithCancel(life)
		defer cancel()
		defer context.AfterFunc(st.ended, cancel)()
		start(ctx)
	})
}

// waitFor converts a wait= value.
func waitFor(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }
