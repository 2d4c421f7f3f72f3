package ws

import (
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

type fakePinger struct {
	mu    sync.Mutex
	pings []time.Time
}

func (f *fakePinger) WritePing([]byte) error {
	f.mu.Lock()
	f.pings = append(f.pings, time.Now())
	f.mu.Unlock()
	return nil
}

func (f *fakePinger) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pings)
}

func TestHeartbeatPingsEvery30s(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakePinger{}
		var dead atomic.Bool
		hb := StartHeartbeat(HeartbeatConfig{}, p, func() { dead.Store(true) })
		defer hb.Stop()
		// A live peer answers every ping; keep it seen.
		for i := 1; i <= 5; i++ {
			time.Sleep(30 * time.Second)
			synctest.Wait()
			hb.Seen()
			if p.count() != i {
				t.Fatalf("after %ds: %d pings, want %d", i*30, p.count(), i)
			}
		}
		if dead.Load() {
			t.Fatal("a peer that answers was declared dead")
		}
	})
}

func TestHeartbeatDeadAfter90sOfSilence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakePinger{}
		var deadAt atomic.Int64
		start := time.Now()
		hb := StartHeartbeat(HeartbeatConfig{}, p, func() { deadAt.Store(int64(time.Since(start))) })
		defer hb.Stop()
		time.Sleep(60 * time.Second) // a frame at 60 s pushes death to 150 s
		hb.Seen()
		time.Sleep(89 * time.Second)
		synctest.Wait()
		if deadAt.Load() != 0 {
			t.Fatalf("declared dead at %v, only 89 s after the last frame", time.Duration(deadAt.Load()))
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got := time.Duration(deadAt.Load()); got != 150*time.Second {
			t.Fatalf("declared dead at %v, want exactly 150s (90 s after the last frame)", got)
		}
		n := p.count()
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if p.count() != n {
			t.Fatal("pings continued after death")
		}
	})
}

func TestHeartbeatStopIsFinal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakePinger{}
		called := false
		hb := StartHeartbeat(HeartbeatConfig{Interval: time.Second, DeadAfter: 3 * time.Second}, p, func() { called = true })
		hb.Stop()
		hb.Stop()
		time.Sleep(time.Minute)
		synctest.Wait()
		if called || p.count() != 0 {
			t.Fatalf("stopped heartbeat acted: dead=%v pings=%d", called, p.count())
		}
	})
}

func BenchmarkHeartbeatSeen(b *testing.B) {
	hb := StartHeartbeat(HeartbeatConfig{}, &fakePinger{}, func() {})
	defer hb.Stop()
	for b.Loop() {
		hb.Seen()
	}
}

// answeringPeer pongs every ping at once, as a browser does.
type answeringPeer struct {
	fakePinger
	hb atomic.Pointer[Heartbeat]
}

func (p *answeringPeer) WritePing(b []byte) error {
	p.fakePinger.WritePing(b)
	p.hb.Load().Seen()
	return nil
}

// countingAfterFunc is time.AfterFunc that counts the wake-ups.
func countingAfterFunc(fires *atomic.Int64) func(time.Duration, func()) stopper {
	return func(d time.Duration, f func()) stopper {
		return time.AfterFunc(d, func() { fires.Add(1); f() })
	}
}

// TestHeartbeatLivePeerWakesOnlyToPing: every socket of an idle hub with
// a page pays each wake-up of its heartbeat; a peer that answers must cost
// the pings and nothing else.
func TestHeartbeatLivePeerWakesOnlyToPing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &answeringPeer{}
		var fires atomic.Int64
		var dead atomic.Bool
		hb := startHeartbeat(HeartbeatConfig{}, p, func() { dead.Store(true) }, countingAfterFunc(&fires))
		p.hb.Store(hb)
		defer hb.Stop()
		time.Sleep(10*time.Minute + time.Second)
		synctest.Wait()
		if p.count() != 20 {
			t.Fatalf("%d pings in 10 minutes, want 20 (one every 30 s)", p.count())
		}
		if n := fires.Load(); n != 20 {
			t.Fatalf("%d timer wake-ups in 10 minutes for 20 pings; want one per ping", n)
		}
		if dead.Load() {
			t.Fatal("a peer that answers was declared dead")
		}
	})
}

// TestHeartbeatDeadlineTimings: the deadline wins over a ping
// due at the same instant, and the timings still hold when the deadline is
// shorter than the ping interval.
func TestHeartbeatDeadlineTimings(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cfg       HeartbeatConfig
		wantDead  time.Duration
		wantPings int
	}{
		{"defaults", HeartbeatConfig{}, 90 * time.Second, 2},
		{"dead before first ping", HeartbeatConfig{Interval: 30 * time.Second, DeadAfter: 10 * time.Second}, 10 * time.Second, 0},
		{"uneven", HeartbeatConfig{Interval: 7 * time.Second, DeadAfter: 20 * time.Second}, 20 * time.Second, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &fakePinger{}
				var deadAt atomic.Int64
				start := time.Now()
				hb := StartHeartbeat(tc.cfg, p, func() { deadAt.Store(int64(time.Since(start))) })
				defer hb.Stop()
				time.Sleep(10 * time.Minute)
				synctest.Wait()
				if got := time.Duration(deadAt.Load()); got != tc.wantDead {
					t.Fatalf("dead at %v, want %v", got, tc.wantDead)
				}
				if p.count() != tc.wantPings {
					t.Fatalf("%d pings, want %d", p.count(), tc.wantPings)
				}
			})
		})
	}
}
