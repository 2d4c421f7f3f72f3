package stitchslop

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/hubdev/hub/hub"
)

// remoteFace is the bridgeFace of a bridge another process runs: the
// page's tools come from its event stream, everything else goes through
// its control plane. The MCP face code is the same as for a bridge in this
// process.
type remoteFace struct {
	r   *Remote
	log *slog.Logger

	mu         sync.Mutex
	connected  bool
	tools      []PageTool
	attachedCh chan struct{} // closed while a tab is attached
	listeners  map[int]func()
	nextL      int
	ready      chan struct{} // closed once the first event is in (or the stream ended)
	readyOnce  sync.Once
}

var _ bridgeFace = (*remoteFace)(nil)

func newRemoteFace(r *Remote, log *slog.Logger) *remoteFace {
	return &remoteFace{r: r, log: log, attachedCh: make(chan struct{}), listeners: map[int]func(){}, ready: make(chan struct{})}
}

// follow keeps the tool list in step with the bridge until the event
// stream ends (see Remote.Events).
func (f *remoteFace) follow(ctx context.Context, face string) error {
	err := f.r.Events(ctx, face, f.apply)
	f.apply(ToolsEvent{}) // whatever the bridge had is no longer offered
	f.readyOnce.Do(func() { close(f.ready) })
	return err
}

// apply takes one event's state and tells the subscribers.
func (f *remoteFace) apply(ev ToolsEvent) {
	f.mu.Lock()
	was := f.connected
	f.connected, f.tools = ev.Connected, ev.Tools
	switch {
	case ev.Connected && !was:
		close(f.attachedCh)
	case !ev.Connected && was:
		f.attachedCh = make(chan struct{})
	}
	fns := make([]func(), 0, len(f.listeners))
	for _, fn := range f.listeners {
		fns = append(fns, fn)
	}
	f.mu.Unlock()
	f.readyOnce.Do(func() { close(f.ready) })
	for _, fn := range fns {
		fn()
	}
}

func (f *remoteFace) Origin() string { return f.r.Origin }
func (f *remoteFace) Port() int      { return f.r.Port }

func (f *remoteFace) Tools() ([]PageTool, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]PageTool(nil), f.tools...), f.connected
}

func (f *remoteFace) Subscribe(fn func()) func() {
	f.mu.Lock()
	id := f.nextL
	f.nextL++
	f.listeners[id] = fn
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		delete(f.listeners, id)
		f.mu.Unlock()
	}
}

func (f *remoteFace) Call(ctx context.Context, command string, args json.RawMessage) ([]byte, error) {
	return f.r.Call(ctx, command, args)
}

// Report is the bridge's own status, or what is known without it.
func (f *remoteFace) Report() StatusReport {
	ctx, cancel := context.WithTimeout(context.Background(), verifyTimeout)
	defer cancel()
	st, err := f.r.Status(ctx)
	if err != nil {
		_, connected := f.Tools()
		return StatusReport{OK: false, Connected: connected, Port: f.r.Port, Origin: f.r.Origin, Protocol: ProtocolVersion,
			PID: f.r.PID, Tools: []string{}, Refusals: []Refusal{}, Agents: []AgentReport{}, PairedSites: []string{}, ArmedSites: []string{}, Message: "The bridge did not answer its status: " + err.Error()}
	}
	return st
}

// pair arms the token on the bridge through its keyed POST /pair.
func (f *remoteFace) pair(ctx context.Context, site, token string) (string, error) {
	if err := f.r.PairSite(ctx, site, token); err != nil {
		return "", err
	}
	if site == "" {
		site = f.r.Origin
	}
	if n, ok := hub.NormalizeOrigin(site); ok {
		site = n
	}
	return site, nil
}

// waitAttached waits on the event stream's state: no request stays open
// at the bridge, and a face that takes over keeps waiting on its own.
func (f *remoteFace) waitAttached(ctx context.Context, d time.Duration) bool {
	f.mu.Lock()
	ch, ok := f.attachedCh, f.connected
	f.mu.Unlock()
	if ok || waitClosed(ctx, ch, d) {
		return true
	}
	_, ok = f.Tools()
	return ok
}

// agentActivity needs no request: the bridge counts this face as attached
// for as long as its event stream is open, and every call it makes is
// control-plane activity there.
func (f *remoteFace) agentActivity()       {}
func (f *remoteFace) sessionAdd(int)       {}
func (f *remoteFace) logger() *slog.Logger { return f.log }

func (f *remoteFace) voiceDir() string { return f.r.dir }
