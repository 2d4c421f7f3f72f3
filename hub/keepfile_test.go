package hub

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// keptTestFile is a KeptFile that rewrites path with want when it is
// missing or different, counting its checks.
func keptTestFile(path, want string, checks *atomic.Int64) KeptFile {
	return KeptFile{Name: "a test file", Path: path, Check: func() (string, func() error) {
		checks.Add(1)
		got, err := os.ReadFile(path)
		if err == nil && string(got) == want {
			return "", nil
		}
		return "missing or changed", func() error { return os.WriteFile(path, []byte(want), 0o600) }
	}}
}

// TestFileKeeperChecksEverySetOnOneTicker: files registered by several
// keepers are all checked once per period on the one keeper, a deleted or
// replaced one is put back within one period, and a stopped set is
// checked no more (its file, removed on the way out, stays removed).
func TestFileKeeperChecksEverySetOnOneTicker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		log := slog.New(slog.DiscardHandler)
		k := NewFileKeeper(0)
		if k.Every() != KeepInterval {
			t.Fatalf("default period = %v, want KeepInterval", k.Every())
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var checks [3]atomic.Int64
		var stops [3]func()
		paths := [3]string{}
		for i := range paths {
			paths[i] = filepath.Join(dir, string(rune('a'+i)))
			os.WriteFile(paths[i], []byte("ours"), 0o600)
			stops[i] = k.Keep(log, keptTestFile(paths[i], "ours", &checks[i]))
		}
		if n := k.Kept(); n != 3 {
			t.Fatalf("Kept = %d, want 3", n)
		}
		go k.Run(ctx)

		time.Sleep(KeepInterval - time.Millisecond)
		synctest.Wait()
		for i := range checks {
			if n := checks[i].Load(); n != 0 {
				t.Fatalf("set %d checked %d times before one period", i, n)
			}
		}
		os.Remove(paths[0])
		os.WriteFile(paths[1], []byte("another's"), 0o600)
		time.Sleep(time.Millisecond)
		synctest.Wait()
		for i := range checks {
			if n := checks[i].Load(); n != 1 {
				t.Fatalf("set %d checked %d times in one period, want 1", i, n)
			}
			if got, err := os.ReadFile(paths[i]); err != nil || string(got) != "ours" {
				t.Fatalf("file %d after one period = %q, %v", i, got, err)
			}
		}

		stops[2]()
		stops[2]() // idempotent
		os.Remove(paths[2])
		time.Sleep(KeepInterval)
		synctest.Wait()
		if _, err := os.Stat(paths[2]); err == nil {
			t.Fatal("a stopped set's file was put back")
		}
		if n := checks[2].Load(); n != 1 {
			t.Fatalf("stopped set checked %d times, want 1", n)
		}
		if n := k.Kept(); n != 2 {
			t.Fatalf("Kept after a stop = %d, want 2", n)
		}
	})
}

// TestFileKeeperStopWaitsForACheck: stop returns only after a check of
// its set that is running has finished, so a caller removing its file
// after stop cannot have it put back by that check.
func TestFileKeeperStopWaitsForACheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := NewFileKeeper(time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		entered, release := make(chan struct{}), make(chan struct{})
		stop := k.Keep(slog.New(slog.DiscardHandler), KeptFile{Name: "slow", Path: "slow", Check: func() (string, func() error) {
			select {
			case entered <- struct{}{}:
				<-release
			default:
			}
			return "", nil
		}})
		go k.Run(ctx)
		<-entered
		stopped := make(chan struct{})
		go func() { stop(); close(stopped) }()
		synctest.Wait()
		select {
		case <-stopped:
			t.Fatal("stop returned while a check of its set ran")
		default:
		}
		close(release)
		<-stopped
	})
}

// TestKeepFilesAlone: without a shared keeper (a bridge running alone),
// KeepFiles keeps its files on a ticker of its own at its interval; with
// one, at the keeper's period; either way it returns when ctx ends, after
// which nothing is put back.
func TestKeepFilesAlone(t *testing.T) {
	for _, shared := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f")
			var checks atomic.Int64
			ctx, cancel := context.WithCancel(context.Background())
			every := 2 * time.Second
			var k *FileKeeper
			if shared {
				k = NewFileKeeper(every)
				kctx, kcancel := context.WithCancel(context.Background())
				defer kcancel()
				go k.Run(kctx)
			}
			done := make(chan struct{})
			go func() {
				KeepFiles(ctx, k, every, slog.New(slog.DiscardHandler), keptTestFile(path, "ours", &checks))
				close(done)
			}()
			time.Sleep(every)
			synctest.Wait()
			if got, err := os.ReadFile(path); err != nil || string(got) != "ours" {
				t.Fatalf("shared=%v: after one interval = %q, %v", shared, got, err)
			}
			cancel()
			<-done
			os.Remove(path)
			time.Sleep(3 * every)
			synctest.Wait()
			if _, err := os.Stat(path); err == nil {
				t.Fatalf("shared=%v: the file was put back after KeepFiles returned", shared)
			}
			if k != nil && k.Kept() != 0 {
				t.Fatalf("the keeper still holds %d files", k.Kept())
			}
		})
	}
}
