package stitchslop

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubdev/hub/hub"
)

// panickyBridge is a bridge whose tool list panics once the page changes.
type panickyBridge struct {
	*Server
	calls  atomic.Int32
	notify func()
}

func (b *panickyBridge) Tools() ([]PageTool, bool) {
	if b.calls.Add(1) > 1 {
		panic("tool list broke")
	}
	return nil, false
}

func (b *panickyBridge) Subscribe(fn func()) func() {
	b.notify = fn
	return func() {}
}

// Issue 15 (goroutines an adapter starts): the MCP face's sync goroutine
// runs under the guard its context carries, so a panic in it is reported
// (the run ends and restarts) instead of killing the process.
func TestFaceSyncPanicIsContained(t *testing.T) {
	s, err := New(&Config{Origin: testOrigin})
	if err != nil {
		t.Fatal(err)
	}
	b := &panickyBridge{Server: s}
	panics := make(chan *hub.PanicError, 1)
	g := hub.NewGuard(slog.New(slog.DiscardHandler), func(pe *hub.PanicError) { panics <- pe })
	ctx, cancel := context.WithCancel(hub.WithGuard(context.Background(), g))
	defer cancel()
	f := newFace(b, nil)
	done := f.keepSynced(ctx)
	b.notify() // the page changed: the sync goroutine asks for the tools
	select {
	case pe := <-panics:
		if pe.Where != "stitchslop page-tools sync" {
			t.Fatalf("panic reported from %q", pe.Where)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the panic was not reported to the guard")
	}
	<-done // and the goroutine's own cleanup still ran
}
