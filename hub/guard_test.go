package hub

import (
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

type reports struct {
	mu  sync.Mutex
	got []*PanicError
}

func (r *reports) add(pe *PanicError) { r.mu.Lock(); r.got = append(r.got, pe); r.mu.Unlock() }
func (r *reports) all() []*PanicError {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*PanicError(nil), r.got...)
}

func TestGuardRecoversGoroutinesAndTimers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r reports
		g := NewGuard(nil, r.add)
		g.Go("worker", func() { panic("worker boom") })
		g.AfterFunc("timer", time.Minute, func() { panic("timer boom") })
		ran := false
		g.AfterFunc("quiet", time.Second, func() { ran = true })
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		got := r.all()
		if len(got) != 2 || !ran {
			t.Fatalf("reports %v, quiet ran %v", got, ran)
		}
		for _, pe := range got {
			if !strings.Contains(pe.Error(), "boom (in "+pe.Where+")") || !strings.Contains(string(pe.Stack), "guard_test.go") {
				t.Errorf("report %q lacks where or stack:\n%s", pe, pe.Stack)
			}
		}
		// A nil guard runs things plainly.
		var nilGuard *Guard
		done := make(chan struct{})
		nilGuard.Go("plain", func() { close(done) })
		<-done
		fired := false
		nilGuard.AfterFunc("plain", time.Second, func() { fired = true })
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if !fired {
			t.Fatal("a nil guard's timer did not fire")
		}
	})
}

// panicHandler's sessions panic on their first message.
