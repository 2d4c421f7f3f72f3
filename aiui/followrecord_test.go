package aiui

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// An idle backend must not wake every RecordCheckInterval: the record is
// looked at only while a face or a following shell is attached.
func TestFollowRecordSleepsWhileNobodyWatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newTestOutbox(t, 10)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var syncs atomic.Int64
		done := make(chan struct{})
		go func() {
			defer close(done)
			followWhileWatched(ctx, time.Second, o.Watched, func() bool { syncs.Add(1); return o.Sync() })
		}()
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := syncs.Load(); n != 0 {
			t.Fatalf("with nobody attached the record was looked at %d times in an hour, want 0", n)
		}
		f := o.Attach("face", "")
		time.Sleep(3*time.Second + time.Millisecond)
		synctest.Wait()
		if n := syncs.Load(); n != 3 {
			t.Fatalf("with a face attached: %d looks in 3 s, want 3", n)
		}
		o.Detach(f, nil)
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := syncs.Load(); n != 4 { // the one tick that finds the face gone
			t.Fatalf("after the face left: %d looks, want 4", n)
		}
		_, fl := o.Follow(true)
		time.Sleep(2*time.Second + time.Millisecond)
		synctest.Wait()
		if n := syncs.Load(); n != 6 {
			t.Fatalf("with a follower: %d looks, want 6", n)
		}
		o.Unfollow(fl, nil)
		cancel()
		<-done
	})
}
