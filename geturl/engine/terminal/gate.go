package terminal

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrGateBusy is returned by Gate.Acquire when the queue is full or the
// wait ran out.
var ErrGateBusy = errors.New("terminal concurrency gate busy")

// Gate is the machine-wide cap on foreground terminal processes (the spec's
// TerminalConcurrencyGate): one per Manager, shared by every session.
//
// The spec says only "capped". A caller beyond the cap waits, first come
// first served, rather than being refused outright: a foreground intent is
// already asynchronous (the journal answers "pending" and the agent polls),
// so a short queue costs the agent nothing and spares it a retry. The wait
// is bounded (maxWait) and so is the queue (maxQueue); past either the
// caller gets ErrGateBusy, which the terminal reports as the retryable
// terminal_busy.
type Gate struct {
	mu       sync.Mutex
	slots    int
	inUse    int
	maxQueue int
	queue    []*gateWaiter
	clock    Clock
}

type gateWaiter struct {
	ready   chan struct{}
	granted bool
}

// NewGate returns a gate of slots concurrent holders and at most maxQueue
// waiters. A nil clock is the wall clock.
func NewGate(slots, maxQueue int, clock Clock) *Gate {
	if clock == nil {
		clock = wallClock{}
	}
	return &Gate{slots: max(slots, 1), maxQueue: max(maxQueue, 0), clock: clock}
}

// Acquire takes a slot, waiting up to maxWait (≤ 0: not at all) behind
// earlier callers. It returns ErrGateBusy when the queue is full or the
// wait ran out, and ctx's error when ctx ended first. release gives the
// slot back (to the next waiter); it may be called more than once.
func (g *Gate) Acquire(ctx context.Context, maxWait time.Duration) (release func(), err error) {
	g.mu.Lock()
	if g.inUse < g.slots && len(g.queue) == 0 {
		g.inUse++
		g.mu.Unlock()
		return g.releaser(), nil
	}
	if maxWait <= 0 || len(g.queue) >= g.maxQueue {
		g.mu.Unlock()
		return nil, ErrGateBusy
	}
	w := &gateWaiter{ready: make(chan struct{})}
	g.queue = append(g.queue, w)
	g.mu.Unlock()

	select {
	case <-w.ready:
		return g.releaser(), nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-g.clock.After(maxWait):
		err = ErrGateBusy
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if w.granted { // handed a slot as we gave up: pass it on
		g.releaseLocked()
		return nil, err
	}
	for i, q := range g.queue {
		if q == w {
			g.queue = append(g.queue[:i], g.queue[i+1:]...)
			break
		}
	}
	return nil, err
}

func (g *Gate) releaser() func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.releaseLocked()
			g.mu.Unlock()
		})
	}
}

func (g *Gate) releaseLocked() {
	if len(g.queue) > 0 {
		w := g.queue[0]
		g.queue = g.queue[1:]
		w.granted = true
		close(w.ready)
		return
	}
	g.inUse--
}

// Stats reports the slots held and the callers waiting.
func (g *Gate) Stats() (inUse, queued int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inUse, len(g.queue)
}
