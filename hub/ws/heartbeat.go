package ws

import (
	"sync"
	"sync/atomic"
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
//
// One timer serves both: it is armed for the earlier of the next ping and
// the deadline, so a live peer, whose pongs keep pushing the deadline past
// the next ping, wakes the process only to ping.
type Heartbeat struct {
	cfg    HeartbeatConfig
	conn   Pinger
	onDead func()
	born   time.Time

	// seen is the time of the last frame, as nanoseconds since born (a
	// monotonic reading): Seen runs on every frame, so it is one store.
	seen atomic.Int64

	mu       sync.Mutex
	timer    stopper
	nextPing time.Duration // since born
	stopped  bool
}

// stopper is the part of *time.Timer a Heartbeat uses.
type stopper interface {
	Reset(time.Duration) bool
	Stop() bool
}

// StartHeartbeat begins pinging conn. Call Seen on every frame received from
// the peer (messages, pings and pongs) and Stop when the connection closes.
//
// Pings share the connection's writer: an owner that sets a write deadline
// for one frame must clear it afterwards, or a later ping fails on the stale
// deadline and a live peer looks dead.
func StartHeartbeat(cfg HeartbeatConfig, conn Pinger, onDead func()) *Heartbeat {
	return startHeartbeat(cfg, conn, onDead, func(d time.Duration, f func()) stopper { return time.AfterFunc(d, f) })
}

// startHeartbeat takes the timer constructor, so a test can count wake-ups.
func startHeartbeat(cfg HeartbeatConfig, conn Pinger, onDead func(), afterFunc func(time.Duration, func()) stopper) *Heartbeat {
	h := &Heartbeat{cfg: cfg.withDefaults(), conn: conn, onDead: onDead, born: time.Now()}
	h.mu.Lock()
	h.nextPing = h.cfg.Interval
	h.timer = afterFunc(min(h.cfg.Interval, h.cfg.DeadAfter), h.fire)
	h.mu.Unlock()
	return h
}

// Seen records that the peer is alive. It is cheap: it only stores a time;
// the timer re-arms itself lazily when it fires.
func (h *Heartbeat) Seen() { h.seen.Store(int64(time.Since(h.born))) }

// Stop cancels the timer; it is idempotent and safe from any goroutine.
func (h *Heartbeat) Stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = true
	h.timer.Stop()
}

// fire runs when the timer does: the peer is dead if it has been silent for
// DeadAfter (no ping then), else it is pinged if a ping is due, and the
// timer is re-armed for whichever of the two comes next.
func (h *Heartbeat) fire() {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return
	}
	now := time.Since(h.born)
	deadline := time.Duration(h.seen.Load()) + h.cfg.DeadAfter
	if now >= deadline {
		h.stopped = true
		h.mu.Unlock()
		h.onDead()
		return
	}
	ping := now >= h.nextPing
	if ping {
		h.nextPing += h.cfg.Interval
		if h.nextPing <= now { // the timer ran late by more than an interval
			h.nextPing = now + h.cfg.Interval
		}
	}
	h.timer.Reset(min(h.nextPing, deadline) - now)
	h.mu.Unlock()
	if ping {
		// A failed write is not death by itself; silence is what counts.
		_ = h.conn.WritePing(nil)
	}
}
