package hub

import (
	"errors"
	"net"
	"testing"
	"testing/synctest"
	"time"
)

func TestBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(100)
		if err := b.Acquire(101, time.Second, nil); !errors.Is(err, ErrBudgetTooLarge) {
			t.Fatalf("more than the whole budget: %v", err)
		}
		if !b.TryAcquire(60) || b.TryAcquire(50) || b.Free() != 40 {
			t.Fatalf("TryAcquire: free %d", b.Free())
		}

		// A wait ends when room comes back, and not before.
		got := make(chan error, 1)
		go func() { got <- b.Acquire(50, time.Minute, nil) }()
		synctest.Wait()
		select {
		case err := <-got:
			t.Fatalf("acquired with no room: %v", err)
		default:
		}
		b.Release(60)
		if err := <-got; err != nil || b.Free() != 50 {
			t.Fatalf("after a release: %v, free %d", err, b.Free())
		}

		// With no room it gives up after its wait, or when stop closes.
		start := time.Now()
		if err := b.Acquire(80, 30*time.Second, nil); !errors.Is(err, ErrBudgetWait) || time.Since(start) != 30*time.Second {
			t.Fatalf("no room: %v after %v", err, time.Since(start))
		}
		stop := make(chan struct{})
		go func() { got <- b.Acquire(80, time.Minute, stop) }()
		synctest.Wait()
		close(stop)
		if err := <-got; !errors.Is(err, net.ErrClosed) {
			t.Fatalf("stopped: %v", err)
		}
		if b.Free() != 50 {
			t.Fatalf("failed waits took bytes: free %d", b.Free())
		}
	})
}
