package adaptertest

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters"
)

// Background is one adapter's Serve on a goroutine with its log captured
// and its Ready calls collected: for tests that watch Serve itself (what it
// logs while it waits, whether it reports ready at all), which Start,
// waiting for Ready, cannot.
type Background struct {
	Logs  *SyncBuffer
	Ready <-chan []int    // the ports of each Ready call
	Done  <-chan struct{} // closed when Serve has returned

	err    error
	cancel context.CancelFunc
	once   sync.Once
}

// ServeInBackground runs a.Serve with env, its Log and Ready replaced.
// Call Stop (defer it) before anything Serve reads is restored.
func ServeInBackground(a adapters.Adapter, env adapters.Env) *Background {
	logs := &SyncBuffer{}
	ready, done := make(chan []int, 1), make(chan struct{})
	env.Log = slog.New(slog.NewTextHandler(logs, nil))
	env.Ready = func(p ...int) { ready <- p }
	ctx, cancel := context.WithCancel(context.Background())
	b := &Background{Logs: logs, Ready: ready, Done: done, cancel: cancel}
	go func() {
		defer close(done)
		b.err = a.Serve(ctx, &env)
	}()
	return b
}

// Err is what Serve returned, once Done is closed.
func (b *Background) Err() error {
	<-b.Done
	return b.err
}

// Stop cancels Serve and waits for it to return; it is idempotent.
func (b *Background) Stop() {
	b.once.Do(b.cancel)
	<-b.Done
}

// AwaitReady returns the ports of Serve's Ready, failing the test when
// Serve returns first (or after WaitTimeout, which only a broken test
// reaches).
func (b *Background) AwaitReady(t testing.TB, what string) []int {
	t.Helper()
	select {
	case p := <-b.Ready:
		return p
	case <-b.Done:
		t.Fatalf("Serve ended before %s: %v", what, b.err)
	case <-time.After(WaitTimeout):
		t.Fatalf("timed out waiting for %s", what)
	}
	return nil
}
