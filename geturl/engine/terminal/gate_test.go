package terminal

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestGateFIFO(t *testing.T) {
	clk := newFakeClock()
	g := NewGate(2, 4, clk)
	r1, err1 := g.Acquire(context.Background(), time.Second)
	r2, err2 := g.Acquire(context.Background(), time.Second)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	got := make(chan int, 3)
	releases := make(chan func(), 3)
	for i := range 3 {
		go func() {
			r, err := g.Acquire(context.Background(), time.Hour)
			if err != nil {
				t.Error(err)
				return
			}
			got <- i
			releases <- r
		}()
		waitQueued(t, g, i+1) // queue them in order
	}
	r1()
	r1() // a second release is a no-op
	if first := <-got; first != 0 {
		t.Fatalf("first served %d", first)
	}
	if inUse, queued := g.Stats(); inUse != 2 || queued != 2 {
		t.Fatalf("inUse %d queued %d", inUse, queued)
	}
	r2()
	if second := <-got; second != 1 {
		t.Fatalf("second served %d", second)
	}
	(<-releases)()
	if third := <-got; third != 2 {
		t.Fatalf("third served %d", third)
	}
	(<-releases)()
	(<-releases)()
	if inUse, queued := g.Stats(); inUse != 0 || queued != 0 {
		t.Fatalf("inUse %d queued %d", inUse, queued)
	}
}

func TestGateRefusals(t *testing.T) {
	clk := newFakeClock()
	g := NewGate(1, 1, clk)
	hold, _ := g.Acquire(context.Background(), time.Second)
	if _, err := g.Acquire(context.Background(), 0); !errors.Is(err, ErrGateBusy) {
		t.Fatalf("no wait: %v", err)
	}

	waited := make(chan error, 1)
	go func() {
		_, err := g.Acquire(context.Background(), time.Second)
		waited <- err
	}()
	waitQueued(t, g, 1)
	if _, err := g.Acquire(context.Background(), time.Second); !errors.Is(err, ErrGateBusy) {
		t.Fatalf("queue full: %v", err)
	}
	clk.waitPending(t, 1)
	clk.Advance(time.Second)
	if err := <-waited; !errors.Is(err, ErrGateBusy) {
		t.Fatalf("wait ran out: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, err := g.Acquire(ctx, time.Hour)
		waited <- err
	}()
	waitQueued(t, g, 1)
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: %v", err)
	}
	if _, queued := g.Stats(); queued != 0 {
		t.Fatal("canceled waiter still queued")
	}
	hold()
	if r, err := g.Acquire(context.Background(), 0); err != nil {
		t.Fatal("slot not given back")
	} else {
		r()
	}
}

func waitQueued(t *testing.T, g *Gate, n int) {
	t.Helper()
	deadline := time.Now().Add(generous)
	for {
		if _, queued := g.Stats(); queued == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("never %d queued", n)
		}
		time.Sleep(time.Millisecond)
	}
}
