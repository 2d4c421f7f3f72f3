package ws

import (
	"sync"
	"time"
)

// Default heartbeat timings: ping every 30 s, peer dead after 90 s of silence.
const (
	DefaultPingInterval = 30 * time.Second
	DefaultDeadAfter    = 90 * time.Second
)

// HeartbeatConfig sets the timings; zero values mean the defaults.
type HeartbeatConfig struct {
	Interval  time.Duration
	DeadAfter time.Duration
}

func (c HeartbeatConfig) withDefaults() HeartbeatConfig {
	if c.Interval <= 0 {
		c.Interval = DefaultPingInterval
	}
	if c.DeadAfter <= 0 {
		c.DeadAfter = DefaultDeadAfter
	}
	return c
}

// Pinger is the part of a WebSocket connection a heartbeat needs;
// *gws.Conn satisfies it.
type Pinger interface {
	WritePing(payload []byte) error
}

// Heartbeat keeps one WebSocket peer honest: it pings every Interval and
// calls onDead once when no frame at all has been Seen for DeadAfter. The
// owner closes the socket in onDead, so a dead peer takes exactly the path
// a close takes (tools dropped, pending calls failed).
type Heartbeat struct {
	cfg    HeartbeatConfig
	conn   Pinger
	onDead func()

	mu       sync.Mutex
	lastSeen time.Time
	ping     *time.Timer
	dead     *time.Timer
	stopped  bool
}

// StartHeartbeat begins pinging conn. Call Seen on every frame received from
// the peer (messages, pings and pongs) and Stop when the connection closes.
//
// Pings share the connection's writer: an owner that sets a write deadline
// for one frame must clear it afterwards, or a later ping fails on the stale
// deadline and a live peer looks dead.
func StartHeartbeat(cfg HeartbeatConfig, conn Pinger, onDead func()) *Heartbeat {
	h := &Heartbeat{cfg: cfg.withDefaults(), conn: conn, onDead: onDead, lastSeen: time.Now()}
	h.mu.Lock()
	h.ping = time.AfterFunc(h.cfg.Interval, h.sendPing)
	h.dead = time.AfterFunc(h.cfg.DeadAfter, h.checkDead)
	h.mu.Unlock()
	return h
}

// Seen records that the peer is alive. It is cheap: it only stores a time;
// the dead timer re-arms itself lazily when it fires.
func (h *Heartbeat) Seen() {
	h.mu.Lock()
	h.lastSeen = time.Now()
	h.mu.Unlock()
}

// Stop cancels both timers; it is idempotent and safe from any goroutine.
func (h *Heartbeat) Stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = true
	h.ping.Stop()
	h.dead.Stop()
}

func (h *Heartbeat) sendPing() {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return
	}
	h.ping.Reset(h.cfg.Interval)
	h.mu.Unlock()
	// A failed write is not death by itself; silence is what counts.
	_ = h.conn.WritePing(nil)
}

func (h *Heartbeat) checkDead() {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return
	}
	if remaining := h.cfg.DeadAfter - time.Since(h.lastSeen); remaining > 0 {
		h.dead.Reset(remaining)
		h.mu.Unlock()
		return
	}
	h.stopped = true
	h.ping.Stop()
	h.mu.Unlock()
	h.onDead()
}
