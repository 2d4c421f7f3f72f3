package stitchslop

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"sync"
	"time"
)

// FaceReport says, for a face that is not its own bridge or became one by
// taking over, which bridge it serves (wait_for_connection's answers end
// with its Message).
type FaceReport struct {
	// Mode is "following", "taking-over" or "took-over".
	Mode       string `json:"mode"`
	LeaderPort int    `json:"leaderPort,omitempty"`
	LeaderPID  int    `json:"leaderPid,omitempty"`
	Message    string `json:"message"`
}

// switchBridge is the bridgeFace an MCP face keeps for its whole session
// while the bridge behind it changes: a remote bridge it follows, its own
// bridge after taking over, or none for a while (then every call says
// why). Subscribers and the session count move with each switch.
type switchBridge struct {
	origin string
	log    *slog.Logger

	mu        sync.Mutex
	cur       bridgeFace // nil while there is none
	why       string     // why cur is nil
	port      int        // the last known port
	face      *FaceReport
	switched  chan struct{} // closed and replaced at every switch
	listeners map[int]func()
	nextL     int
	unsub     func()
	sessions  int
}

var _ bridgeFace = (*switchBridge)(nil)

func newSwitchBridge(origin string, log *slog.Logger) *switchBridge {
	return &switchBridge{origin: origin, log: log, switched: make(chan struct{}), listeners: map[int]func(){}, unsub: func() {}}
}

// set makes cur the bridge (nil: none, for the reason why) and tells the
// subscribers, whose tool lists follow.
func (b *switchBridge) set(cur bridgeFace, why string, face *FaceReport) {
	b.setIf(nil, false, cur, why, face)
}

// setIf is set while the bridge is still was (any bridge, when !check);
// it reports whether it set.
func (b *switchBridge) setIf(was bridgeFace, check bool, cur bridgeFace, why string, face *FaceReport) bool {
	b.mu.Lock()
	old := b.cur
	if check && old != was {
		b.mu.Unlock()
		return false
	}
	b.unsub()
	b.unsub = func() {}
	b.cur, b.why, b.face = cur, why, face
	if cur != nil {
		b.port = cur.Port()
		b.unsub = cur.Subscribe(b.fire)
	}
	if old != nil && old != cur {
		old.sessionAdd(-b.sessions)
	}
	if cur != nil && old != cur {
		cur.sessionAdd(b.sessions)
	}
	close(b.switched)
	b.switched = make(chan struct{})
	b.mu.Unlock()
	b.fire()
	return true
}

// explain replaces the reason there is no bridge, telling no subscriber:
// nothing they follow changed. False when there is a bridge (set it).
func (b *switchBridge) explain(why string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cur != nil {
		return false
	}
	b.why, b.face = why, nil
	return true
}

func (b *switchBridge) current() (bridgeFace, string, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cur, b.why, b.switched
}

func (b *switchBridge) fire() {
	b.mu.Lock()
	fns := make([]func(), 0, len(b.listeners))
	for _, fn := range b.listeners {
		fns = append(fns, fn)
	}
	b.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

func (b *switchBridge) Origin() string {
	if cur, _, _ := b.current(); cur != nil {
		return cur.Origin()
	}
	return b.origin
}

func (b *switchBridge) Port() int {
	if cur, _, _ := b.current(); cur != nil {
		return cur.Port()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.port
}

func (b *switchBridge) Tools() ([]PageTool, bool) {
	if cur, _, _ := b.current(); cur != nil {
		return cur.Tools()
	}
	return nil, false
}

func (b *switchBridge) Subscribe(fn func()) func() {
	b.mu.Lock()
	id := b.nextL
	b.nextL++
	b.listeners[id] = fn
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		delete(b.listeners, id)
		b.mu.Unlock()
	}
}

func (b *switchBridge) Call(ctx context.Context, command string, args json.RawMessage) ([]byte, error) {
	cur, why, _ := b.current()
	if cur == nil {
		return nil, errors.New(why)
	}
	return cur.Call(ctx, command, args)
}

func (b *switchBridge) Report() StatusReport {
	cur, why, _ := b.current()
	var r StatusReport
	if cur != nil {
		r = cur.Report()
	} else {
		r = StatusReport{OK: true, Port: b.Port(), Origin: b.origin, Protocol: ProtocolVersion, PID: os.Getpid(),
			Tools: []string{}, Refusals: []Refusal{}, Agents: []AgentReport{}, PairedSites: []string{}, ArmedSites: []string{}, Message: why}
	}
	b.mu.Lock()
	if b.face != nil {
		f := *b.face
		r.Face = &f
		r.Message = f.Message + " " + r.Message
	}
	b.mu.Unlock()
	return r
}

func (b *switchBridge) pair(ctx context.Context, site, token string) (string, error) {
	cur, why, _ := b.current()
	if cur == nil {
		return "", errors.New(why)
	}
	return cur.pair(ctx, site, token)
}

// waitAttached waits across switches: a tab that attaches to the bridge
// this face takes over ends the wait as well as one on the bridge it
// followed.
func (b *switchBridge) waitAttached(ctx context.Context, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		cur, _, switched := b.current()
		left := time.Until(deadline)
		if cur != nil {
			wctx, cancel := context.WithCancel(ctx)
			go func() {
				select {
				case <-switched:
					cancel()
				case <-wctx.Done():
				}
			}()
			ok := cur.waitAttached(wctx, max(left, 0))
			cancel()
			if ok {
				return true
			}
		} else if left > 0 {
			t := time.NewTimer(left)
			select {
			case <-switched:
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
		}
		select {
		case <-switched:
			if ctx.Err() == nil && time.Until(deadline) > 0 {
				continue
			}
		default:
		}
		return false
	}
}

func (b *switchBridge) agentActivity() {
	if cur, _, _ := b.current(); cur != nil {
		cur.agentActivity()
	}
}

func (b *switchBridge) sessionAdd(d int) {
	b.mu.Lock()
	b.sessions += d
	cur := b.cur
	b.mu.Unlock()
	if cur != nil {
		cur.sessionAdd(d)
	}
}

func (b *switchBridge) logger() *slog.Logger { return b.log }

func (b *switchBridge) voiceDir() string {
	if cur, _, _ := b.current(); cur != nil {
		return cur.voiceDir()
	}
	return ""
}
