package hub

import (
	"errors"
	"net"
	"sync"
	"time"
)

// Receive-budget defaults (WSOptions.Budget).
const (
	// BudgetFloor: a message of up to this many bytes is received outside
	// the budget. Sockets are capped per listener (DefaultMaxConns), so
	// small messages cost a bounded few MiB together.
	BudgetFloor = 64 << 10
	// DefaultBudgetWait is how long a large message may wait for room in
	// its endpoint's budget before its socket is closed with 1013.
	DefaultBudgetWait = 30 * time.Second
)

// ErrBudgetTooLarge ends a socket whose message is larger than its
// endpoint's whole receive budget.
var ErrBudgetTooLarge = errors.New("message larger than the receive budget")

// ErrBudgetWait ends a socket whose large message found no room in its
// endpoint's receive budget in time.
var ErrBudgetWait = errors.New("no room to receive a large message in time")

// Budget is a number of bytes that holders take and give back: what many
// connections together may hold in memory at once. Endpoints use one for
// the large messages (over BudgetFloor) their authenticated sockets are
// receiving (WSOptions.Budget), routes for large request bodies
// (ReadJSONBodyWithin), protocols for what open streams hold (TryAcquire).
//
// For messages it matters because gws allocates a frame's whole payload
// as soon as it has read the frame's header: without a budget every
// socket that passed its hello could make the process hold MaxPayload
// (measured on aiui's /ws: 60 sockets that each sent a hello and then
// most of a 32 MiB frame held 1.9 GB). A frame whose header asks for more
// than the room left waits, its socket reading nothing more, until
// another socket's message has been handled.
type Budget struct {
	size    int64
	mu      sync.Mutex
	free    int64
	waiting int           // acquires waiting for room
	changed chan struct{} // closed and replaced by a release while any wait
}

// NewBudget makes a budget of size bytes. Endpoints sharing it should have
// a MaxPayload of at most size: a message larger than the whole budget is
// refused (close 1009) rather than left waiting for room that never comes.
func NewBudget(size int64) *Budget {
	return &Budget{size: size, free: size, changed: make(chan struct{})}
}

// Acquire takes n bytes, waiting up to wait for them unless stop closes
// first. It reports whether it took them.
func (b *Budget) Acquire(n int64, wait time.Duration, stop <-chan struct{}) error {
	if n > b.size {
		return ErrBudgetTooLarge
	}
	var timeout <-chan time.Time
	for {
		b.mu.Lock()
		if b.free >= n {
			b.free -= n
			b.mu.Unlock()
			return nil
		}
		changed := b.changed
		b.waiting++
		b.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			timeout = t.C
		}
		var err error
		select {
		case <-changed:
		case <-timeout:
			err = ErrBudgetWait
		case <-stop:
			err = net.ErrClosed
		}
		b.mu.Lock()
		b.waiting--
		b.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// TryAcquire takes n bytes if there is room, without waiting.
func (b *Budget) TryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.free < n {
		return false
	}
	b.free -= n
	return true
}

// Release gives n bytes back and wakes every waiter.
func (b *Budget) Release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.free += n
	if b.waiting > 0 {
		close(b.changed)
		b.changed = make(chan struct{})
	}
	b.mu.Unlock()
}

// Size is the whole budget.
func (b *Budget) Size() int64 { return b.size }

// Free is the room left (tests and status).
func (b *Budget) Free() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.free
}
