package mutation

import (
	"context"
	"sync"
	"time"

	"github.com/hubdev/hub/geturl/kernel"
	"github.com/hubdev/hub/geturl/mutate"
)

// Options configure a Host.
type Options struct {
	// Gate serialises file mutations per project across sessions; share
	// one per process (nil: the Host makes its own).
	Gate *mutate.Gate
	// Terminal runs /x; nil answers terminal_unavailable.
	Terminal Terminal
	// PollWait is the wait= a poll URL carries, in milliseconds (default
	// 1000): each poll holds up to that long for the intent to finish.
	PollWait int
}

// Host is the process-wide half of the mutation kernel: what sessions
// share (the project write gate, the terminal, the project versions that
// decide repeat URLs) and the lifetime that bounds every execution. One
// per process; each session generation brings its own State.
type Host struct {
	gate     *mutate.Gate
	term     Terminal
	pollWait int
	ver      versions

	mu   sync.Mutex
	life context.Context
	wg   sync.WaitGroup
}

// NewHost builds the host.
func NewHost(o Options) *Host {
	h := &Host{gate: o.Gate, term: o.Terminal, pollWait: o.PollWait, life: context.Background()}
	if h.gate == nil {
		h.gate = &mutate.Gate{}
	}
	if h.pollWait <= 0 {
		h.pollWait = 1000
	}
	return h
}

// Install serves the mutation routes of k.
func (h *Host) Install(k *kernel.Kernel) {
	k.Handle("/w", writeSpec, h.write)
	k.Handle("/e", editSpec, h.edit)
	k.Handle("/a", patchSpec, h.patch)
	k.Handle("/x", terminalSpec, h.terminal)
	k.Handle("/s", stageSpec, h.stage)
	k.Handle("/b", blobSpec, h.blobStatus)
	k.Handle("/j", resultSpec, h.result)
}

// Run makes ctx (the adapter's Serve context) the lifetime of the
// executions started from now on: they are detached from their requests
// and end, at the latest, with it. The returned function waits for every
// execution started so far; call it once the servers have stopped (so no
// handler can start another) and ctx is done.
func (h *Host) Run(ctx context.Context) (wait func()) {
	h.mu.Lock()
	h.life = ctx
	h.mu.Unlock()
	return h.wg.Wait
}

// spawn runs start on its own goroutine under the current lifetime.
func (h *Host) spawn(start func(context.Context)) {
	h.mu.Lock()
	life := h.life
	h.wg.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.wg.Done()
		start(life)
	}()
}

// waitFor converts a wait= value.
func waitFor(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }
