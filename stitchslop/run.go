package stitchslop

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/ws"
)

// run is one Serve of a Server, as net/http's conn is one connection of a
// Server: built fresh by Serve once it holds its port, dropped when Serve
// returns. It holds the state of that listener (the page WebSocket, the
// attached page and its tools, the control key, the refusal log, the
// agents driving the tab), so a restarted bridge starts clean by
// construction. Each page socket's own state (its pending calls) is a
// pageConn.
type run struct {
	s        *Server
	env      *adapters.Env
	log      *slog.Logger
	dir      string
	pairings *pairingStore
	port     int
	key      string
	skipped  []hub.Skipped   // ports of the list in use when this run bound its own
	stopping <-chan struct{} // closed when the run is told to stop
	sockets  *ws.Sockets
	pages    *ws.Endpoint // the page WebSocket
	control  hub.KeyGate  // the §4.3 checks in front of every control route
	refusals refusalLog

	// authMu serialises handshake decisions (busy vs take over, redeem).
	authMu sync.Mutex
	agents agentBook // who drives the tab

	mu      sync.Mutex
	page    *pageConn
	with    string // how the page authenticated: "token" or "pairing"
	tools   []PageTool
	dropped []DroppedTool
	faces   int    // follower faces attached to GET /events
	rev     uint64 // bumped on every attach, tool-list revision and detach
}

// runPlace is what Serve has made ready for a run: its config dir, the
// port it holds and the key of its session file.
type runPlace struct {
	dir      string
	store    *pairingStore
	port     int
	key      string
	skipped  []hub.Skipped
	stopping <-chan struct{}
}

func newRun(s *Server, env *adapters.Env, pl runPlace) *run {
	log := env.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if pl.store == nil {
		pl.store = &pairingStore{dir: pl.dir}
	}
	r := &run{s: s, env: env, log: log, dir: pl.dir, pairings: pl.store, port: pl.port, key: pl.key,
		skipped: pl.skipped, stopping: pl.stopping, sockets: &ws.Sockets{}}
	r.pages = r.pageEndpoint(r.sockets, env)
	r.control = hub.KeyGate{Header: KeyHeader, Key: func() string { return r.key }, Port: func() int { return r.port }, Hint: "(a stale session file?)"}
	return r
}

// stop ends the run's page: the sockets are closed by now (ServeHTTP), and
// the page detaches with its pending calls failed.
func (r *run) stop() {
	if p := r.currentPage(); p != nil {
		r.detach(p, "bridge stopped")
	}
}

// isStopping says whether the run was told to stop. A control-plane
// request's context ends with the run, so without this a shell whose call
// the stop cut short would read that it gave up.
func (r *run) isStopping() bool {
	if r.stopping == nil {
		return false
	}
	select {
	case <-r.stopping:
		return true
	default:
		return false
	}
}

// currentPage is the attached page, if any.
func (r *run) currentPage() *pageConn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.page
}

// attachedFaces says whether a page is attached, and how many follower
// faces hold the event stream.
func (r *run) attachedFaces() (bool, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.page != nil, r.faces
}

// Tools returns a copy of the page's sanitised tool list, and whether a
// page is attached.
func (r *run) Tools() ([]PageTool, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]PageTool(nil), r.tools...), r.page != nil
}

// attach makes p the page: waiters woken, subscribers told.
func (r *run) attach(p *pageConn, with string) {
	r.mu.Lock()
	r.page, r.with = p, with
	r.tools, r.dropped = nil, nil
	r.rev++
	r.mu.Unlock()
	r.s.mu.Lock()
	r.s.lastActivity = time.Now()
	r.s.mu.Unlock()
	if r.env != nil {
		r.env.Activity.PageAttached()
	}
	r.log.Info("page attached", "origin", p.origin, "with", with)
	r.s.fire()
}

// detach forgets p if it is the page: tools dropped, pending calls failed,
// subscribers told. It is idempotent.
func (r *run) detach(p *pageConn, why string) {
	failed := p.end()
	r.mu.Lock()
	if r.page != p {
		r.mu.Unlock()
		return
	}
	r.page = nil
	r.tools, r.dropped = nil, nil
	r.rev++
	r.mu.Unlock()
	r.log.Info("page detached", "why", why, "failedCalls", failed)
	r.s.fire()
}

// setTools takes a (revised) tool list from p, if p is still the page.
func (r *run) setTools(p *pageConn, tools []PageTool, dropped []DroppedTool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.page != p {
		return false
	}
	r.tools, r.dropped = tools, dropped
	r.rev++
	return true
}

// note says what the user must do, if anything.
func (r *run) note() string {
	var notes []string
	if len(r.skipped) > 0 {
		// The tab dials the list in order (§2.1): whatever holds an
		// earlier port answers it first.
		why := make([]string, len(r.skipped))
		for i, sk := range r.skipped {
			why[i] = sk.String()
		}
		notes = append(notes, fmt.Sprintf("took port %d because %s; the tab dials those first", r.port, strings.Join(why, ", ")))
	}
	if !r.s.tokenArmed() && !r.pairings.Paired(r.s.origin) {
		notes = append(notes, "needs a token: run 'hub stitchslop pair' (token from STITCHSLOP_TOKEN or stdin)")
	}
	return strings.Join(notes, "; ")
}

// report builds the status snapshot.
func (r *run) report() StatusReport {
	r.mu.Lock()
	rep := StatusReport{OK: true, Connected: r.page != nil, Port: r.port, Origin: r.s.origin, Protocol: ProtocolVersion,
		PID: os.Getpid(), Tools: []string{}, DroppedTools: append([]DroppedTool(nil), r.dropped...)}
	for _, t := range r.tools {
		rep.Tools = append(rep.Tools, t.Name)
	}
	if r.page != nil {
		rep.PageOrigin, rep.AttachedWith = r.page.origin, r.with
	}
	r.mu.Unlock()
	rep.TokenArmed = r.s.tokenArmed()
	rep.ArmedSites = r.s.armedSites()
	rep.PairedSites = r.pairedSites()
	rep.Paired = r.pairings.Paired(r.s.origin)
	note := r.note()
	rep.Attempts, rep.Refusals = r.refusals.snapshot()
	rep.OtherBridges = otherBridges(r.dir, rep.Port)
	rep.Agents = r.agents.report()
	switch {
	case rep.Connected && len(rep.Agents) > 1:
		rep.Message = fmt.Sprintf("A Stitch Slop tab is connected; %d agents drive it side by side (%s).", len(rep.Agents), agentNames(rep.Agents))
	case rep.Connected:
		rep.Message = "A Stitch Slop tab is connected."
	case note != "":
		rep.Message = "No tab connected; this bridge " + note + "."
	case rep.Attempts == 0:
		rep.Message = "No tab connected, and no browser has tried to connect yet (if that persists, check the browser console for a Content-Security-Policy block)."
	case len(rep.Refusals) > 0:
		rep.Message = "No tab connected; the browser tried and was refused (see refusals)."
	default:
		rep.Message = "No tab connected yet; the page polls and attaches on its own."
	}
	return rep
}

// agentRequest records a control request as agent activity for as long as
// it runs (§2.8): a `wait 600` is an agent that is plainly there, and an
// idle exit must not cut it off. The returned end restarts the idle clock
// from the request's end.
func (r *run) agentRequest() (end func()) {
	if r.env == nil {
		r.s.agentActivity()
		return func() {}
	}
	// AgentAttached records the activity in the lifecycle itself.
	r.s.noteActivity()
	return r.env.Activity.AgentAttached()
}
