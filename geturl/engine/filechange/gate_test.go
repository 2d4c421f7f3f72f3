package filechange

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestGateSerialisesOneRoot(t *testing.T) {
	var g Gate
	ctx := context.Background()
	unlock, err := g.Lock(ctx, "/p")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan func())
	go func() {
		u, err := g.Lock(ctx, "/p")
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	// The second locker is registered and waiting; it cannot have the slot.
	for g.waiting("/p") != 2 {
		time.Sleep(time.Millisecond)
	}
	select {
	case <-got:
		t.Fatal("second Lock on the same root did not wait")
	default:
	}
	// Another root is independent.
	other, err := g.Lock(ctx, "/q")
	if err != nil {
		t.Fatal(err)
	}
	other()
	unlock()
	unlock() // idempotent
	u2 := <-got
	u2()
	if n := g.waiting("/p") + g.waiting("/q"); n != 0 {
		t.Fatalf("%d slots left", n)
	}
}

func TestGateContextEnds(t *testing.T) {
	var g Gate
	unlock, _ := g.Lock(context.Background(), "/p")
	defer unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.Lock(ctx, "/p"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if g.waiting("/p") != 1 {
		t.Fatal("a cancelled waiter stayed registered")
	}
}
