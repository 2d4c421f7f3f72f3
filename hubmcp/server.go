package hubmcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/mcpserver"
	"github.com/hubdev/hub/supervisor"
)

// Options configure `hub mcp`.
type Options struct {
	Dirs hub.Dirs
	// Log is stderr's (never stdout: stdout is the protocol).
	Log     *slog.Logger
	Version string
	// CWD is the agent's working directory (a face may route by it: aiui
	// routes prompts to the face whose directory matches the page's
	// source).
	CWD string
	// Registry lists the bridges: every factory with a Face is served,
	// in the registry's order. Nil serves hub_status alone.
	Registry *adapters.Registry
	// StartHub starts a hub in the background (the `hub start` path) when
	// none runs; nil never starts one.
	StartHub func(ctx context.Context) error
	// ListChangedDelay coalesces list_changed across the bridges; 0 means
	// DefaultListChangedDelay.
	ListChangedDelay time.Duration
	// Retry is the pause between looks for a hub or bridge that is not
	// there; 0 means one second.
	Retry time.Duration
	// FirstLook bounds how long Run waits, before it answers initialize,
	// to know what runs (so the first tools/list is complete); 0 means
	// ten seconds.
	FirstLook time.Duration
}

// DefaultListChangedDelay lets the tool changes of one moment (a hub
// coming up with several pages, a page attaching and sending its list)
// reach the client as one list_changed.
const DefaultListChangedDelay = 200 * time.Millisecond

// face is one `hub mcp` process: the MCP server and what it knows of the
// hub behind it.
type face struct {
	o       Options
	log     *slog.Logger
	srv     *mcpserver.Server
	id      string    // how the bridges' logs name this face
	bridges []*bridge // the faces of the registry's bridges, in its order

	mu       sync.Mutex
	hubSt    *supervisor.State // the hub attached to; nil while none
	hubWhy   string            // why none
	started  int               // pid of the hub this face started, if it did
	startErr string
	pending  map[string]bool // bridges whose first state is not in yet
	first    chan struct{}   // closed once the first look is done
}

func newFace(o Options) *face {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.ListChangedDelay <= 0 {
		o.ListChangedDelay = DefaultListChangedDelay
	}
	if o.Retry <= 0 {
		o.Retry = time.Second
	}
	if o.FirstLook <= 0 {
		o.FirstLook = 10 * time.Second
	}
	f := &face{o: o, log: o.Log, id: fmt.Sprintf("hub-mcp-%d", os.Getpid()), first: make(chan struct{})}
	var specs []adapters.Factory
	if o.Registry != nil {
		for _, fac := range o.Registry.Factories() {
			if fac.Face != nil {
				specs = append(specs, fac)
			}
		}
	}
	ins := []string{instructionsHead}
	var experimental map[string]any
	for _, fac := range specs {
		if fac.Face.Instructions != "" {
			ins = append(ins, fac.Face.Instructions)
		}
		for k, v := range fac.Face.Experimental {
			if experimental == nil {
				experimental = map[string]any{}
			}
			experimental[k] = v
		}
	}
	f.srv = mcpserver.New(mcpserver.Options{
		Name:             "hub",
		Version:          o.Version,
		Instructions:     strings.Join(append(ins, instructionsTail), " "),
		Experimental:     experimental,
		ListChangedDelay: o.ListChangedDelay,
		UnknownTool:      f.unknownTool,
		Log:              o.Log,
	})
	mcpserver.AddTool(f.srv, &mcp.Tool{Name: "hub_status", Description: "The hub and each bridge: running or why not, ports, whether a page is attached, " +
		"attached agents, and the tools each contributes (a bridge that is disabled or not running contributes none, and this says why). " +
		"Each attached page's tools are listed with the generic call that reaches each (e.g. page_tools_call), for when your tool list is older than the page."}, f.statusTool)
	// Made in the registry's order, so tools/list shows the bridges in it.
	for _, fac := range specs {
		f.bridges = append(f.bridges, &bridge{name: fac.Name, face: fac.Face.New(adapters.FaceEnv{
			Server: f.srv, Dirs: o.Dirs, Log: o.Log, FaceID: f.id, CWD: o.CWD, Adapter: f.adapterNow(fac.Name),
		})})
	}
	return f
}

// unknownTool answers a call to a tool that is not offered (now): a
// client may call one it listed before its bridge went, and the model
// should learn why rather than see a protocol error.
func (f *face) unknownTool(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name := req.Params.Name
	text := fmt.Sprintf("No tool named %q is offered now.", name)
	for _, b := range f.bridges {
		hint, ok := b.face.Unknown(name)
		if !ok {
			continue
		}
		f.mu.Lock()
		why := b.why
		f.mu.Unlock()
		switch {
		case why != "":
			text += " The " + b.name + " bridge offers no tools: " + why + "."
		case hint != "":
			text += " " + hint
		}
		break
	}
	return mcpserver.ErrorResult(text + " hub_status lists every bridge and its tools."), nil
}

// The server's instructions are these around the faces' own.
const (
	instructionsHead = "This server is the hub: every browser-tool bridge the hub runs, in one MCP server."
	instructionsTail = "hub_status says which bridges run, and why one offers no tools; " +
		"it also lists each attached page's tools with the generic call that reaches each, for a client that does not refresh its tool list on notifications/tools/list_changed."
)

// Run serves `hub mcp` on t until the client goes away or ctx ends. It
// attaches to the running hub, starting one when none runs; it never stops
// a hub, and a hub that stops while it is attached is not started again
// (someone stopped it): its tools go, and come back if a hub starts.
func Run(ctx context.Context, t mcp.Transport, o Options) error {
	f := newFace(o)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for _, b := range f.bridges {
		if r, ok := b.face.(adapters.FaceRunner); ok {
			wg.Go(func() { r.Run(ctx) })
		}
	}
	wg.Go(func() { f.supervise(ctx) })
	select {
	case <-f.first:
	case <-time.After(f.o.FirstLook):
		f.log.Warn("still looking for the hub's bridges; serving anyway (their tools follow with list_changed)")
	case <-ctx.Done():
	}
	_, err := f.srv.Serve(ctx, t)
	cancel()
	wg.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// supervise keeps the face attached to the running hub: it starts one the
// first time none runs, serves each hub until it goes, then looks again.
func (f *face) supervise(ctx context.Context) {
	tried := f.o.StartHub == nil
	gone := 0 // the pid of the hub last served
	began := time.Now()
	for ctx.Err() == nil {
		st, live, msg := supervisor.Probe(f.o.Dirs.State)
		if live != supervisor.Running {
			// The lock held with no state file: a hub is starting (another
			// hub mcp's, say, that won the race to start one). Start no
			// second one, and let the first tools/list wait for its tools.
			starting := live == supervisor.Stale && st == nil && supervisor.LockHeld(f.o.Dirs.State)
			if starting && !f.firstLookDone() && time.Since(began) < f.o.FirstLook {
				f.mu.Lock()
				f.hubWhy = startingWhy
				f.mu.Unlock()
				hub.Sleep(ctx, min(f.o.Retry, startingPoll))
				continue
			}
			if !tried && !starting && live != supervisor.Unsafe {
				tried = true
				f.startHub(ctx, msg)
				continue
			}
			why := "no hub is running"
			switch {
			case starting:
				why = startingWhy
			case gone != 0:
				why = fmt.Sprintf("the hub (pid %d) stopped", gone)
			case live == supervisor.Stale || live == supervisor.Unsafe:
				why += " (" + msg + ")"
			}
			if f.startFailed() {
				why += "; " + startFailedWhy
			}
			f.noHub(why + "; its tools come back when a hub runs (`hub start`)")
			hub.Sleep(ctx, f.o.Retry)
			continue
		}
		// A hub ran: if it stops, someone stopped it, and it is not this
		// face's to start again.
		tried = true
		if st.PID == gone {
			// The hub that just went keeps its state file until its last
			// moment: only a control endpoint that still answers makes it
			// live again.
			if _, err := fetchStatus(ctx, st); err != nil {
				hub.Sleep(ctx, f.o.Retry)
				continue
			}
		}
		f.serveHub(ctx, st)
		gone = st.PID
	}
}

// startingPoll is how often a face looks at a hub that is starting.
const startingPoll = 50 * time.Millisecond

// startingWhy says why a starting hub offers no tools yet.
const startingWhy = "a hub is starting"

// startFailedWhy is added to the reason when this face could not start one.
const startFailedWhy = "starting one failed"

func (f *face) startHub(ctx context.Context, why string) {
	f.log.Info("no hub is running; starting one in the background", "why", why)
	err := f.o.StartHub(ctx)
	if err != nil && supervisor.LockHeld(f.o.Dirs.State) {
		// Another face or `hub start` started one meanwhile: it is used.
		first, _, _ := strings.Cut(err.Error(), "\n") // not the log tail
		f.log.Info("another hub started meanwhile; using it", "err", first)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.startErr = err.Error()
		f.log.Error("could not start a hub", "err", err)
		return
	}
	if st, live, _ := supervisor.Probe(f.o.Dirs.State); live == supervisor.Running {
		f.started = st.PID
	}
}

func (f *face) startFailed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.startErr != ""
}

// noHub withdraws every bridge's tools, for the reason why.
func (f *face) noHub(why string) {
	f.mu.Lock()
	f.hubSt, f.hubWhy = nil, why
	for _, b := range f.bridges {
		b.why = why
	}
	f.mu.Unlock()
	for _, b := range f.bridges {
		f.absent(b, why)
	}
	f.firstDone()
}

// firstLookDone reports whether the first look has ended.
func (f *face) firstLookDone() bool {
	select {
	case <-f.first:
		return true
	default:
		return false
	}
}

// firstDone ends the first look.
func (f *face) firstDone() {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.first:
	default:
		close(f.first)
	}
}

// ready marks a bridge's first state as in; the first look is done when
// every bridge's is.
func (f *face) ready(bridge string) {
	f.mu.Lock()
	delete(f.pending, bridge)
	done := len(f.pending) == 0
	f.mu.Unlock()
	if done {
		f.firstDone()
	}
}
