package aiui

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/portowner/portownertest"
)

// staleControl writes a control file of ours naming port, as a backend
// of ours that died there leaves it: whoever holds the port now is sent
// its key by anyone who takes the file at its word.
func staleControl(t *testing.T, d hub.Dirs, port int) string {
	t.Helper()
	const key = "stale-control-key"
	cf, _ := json.Marshal(ControlFile{Schema: 1, PID: os.Getpid(), Port: port, Key: key, Kind: KindMCP})
	if err := hub.EnsurePrivateDir(StateDir(d)); err != nil {
		t.Fatal(err)
	}
	if err := hub.WriteFileAtomic(ControlPath(d), cf, 0o600); err != nil {
		t.Fatal(err)
	}
	return key
}

// heldBy requires err to be the port walk's refusal naming uid as the
// holder of port.
func heldBy(t *testing.T, err error, port, uid int) {
	t.Helper()
	var he *hub.HeldError
	if !errors.As(err, &he) || !errors.Is(err, hub.ErrPortHeld) || he.Port != port || he.Owner == nil || he.Owner.UID != uid {
		t.Fatalf("err = %v, want the port walk's HeldError naming uid %d on port %d", err, uid, port)
	}
	if msg := err.Error(); !strings.Contains(msg, "held by another user") || !strings.Contains(msg, "nobody") {
		t.Fatalf("err = %q, want it to name the holder", msg)
	}
}

// The hub's aiui on a port another user's listener holds fails at once
// with the error naming that user, which the supervisor shows while the
// other adapters run. It used to take the listener for an aiui backend
// started outside the hub: it waited for one to show up there, and with a
// control file of ours naming the port it sent that file's key to the
// listener and, answered, followed it, reporting the port as its own.
func TestHubRefusesAPortAnotherUserHolds(t *testing.T) {

	for _, tc := range []struct {
		name  string
		stale bool
	}{
		{"no control file", false},
		{"a control file of ours naming the port", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sq := portownertest.Start(t, "127.0.0.1:0")
			h, _ := start(t, nil) // for its guard
			env := *h.Env
			env.Dirs = adaptertest.TempDirs(t)
			env.Follow = adaptertest.FastFollow
			key := ""
			if tc.stale {
				key = staleControl(t, env.Dirs, sq.Port)
			}
			cfg := DefaultConfig()
			cfg.Port = sq.Port
			srv := New(cfg)
			bg := adaptertest.ServeInBackground(srv, env)
			defer bg.Stop()
			select {
			case <-bg.Done:
			case p := <-bg.Ready:
				t.Fatalf("ready on %v: the hub follows another user's listener as an aiui backend; status %+v", p, srv.Status())
			case <-time.After(adaptertest.WaitTimeout):
				t.Fatalf("Serve still runs beside another user's listener; logs:\n%s", bg.Logs.String())
			}
			heldBy(t, bg.Err(), sq.Port, sq.UID)
			if logs := bg.Logs.String(); strings.Contains(logs, "waiting for one") || strings.Contains(logs, "following") {
				t.Errorf("waited for, or followed, another user's listener:\n%s", logs)
			}
			for _, r := range sq.Stop() {
				t.Errorf("the other user's listener got %s %s (authorization %q; the control key is %q)", r.Method, r.Path, r.Authorization, key)
			}
		})
	}
}

// A face starting its own backend on a port another user holds neither
// takes that listener for a backend of ours nor waits for one there: it
// fails, naming the holder.
func TestFaceRefusesAPortAnotherUserHolds(t *testing.T) {

	sq := portownertest.Start(t, "127.0.0.1:0")
	dirs := adaptertest.TempDirs(t)
	key := staleControl(t, dirs, sq.Port)
	own := &inProcess{dirs: dirs, lc: hub.NewLifecycle(hub.IdleRules{}), log: slog.New(slog.DiscardHandler), port: sq.Port, follow: adaptertest.FastFollow}
	defer own.stop()
	ctx, cancel := context.WithTimeout(context.Background(), adaptertest.WaitTimeout)
	defer cancel()
	cl, err := own.start(ctx)
	if err == nil {
		t.Fatalf("the face uses %s, another user's listener, as its backend", cl.Base)
	}
	if ctx.Err() != nil {
		t.Fatalf("the face waited for a backend on another user's port: %v", err)
	}
	heldBy(t, err, sq.Port, sq.UID)
	for _, r := range sq.Stop() {
		t.Errorf("the other user's listener got %s %s (authorization %q; the control key is %q)", r.Method, r.Path, r.Authorization, key)
	}
}

// otherDevice is a network device other than loopback, to bind a
// listener of ours to, or "" when there is none.
func otherDevice() string {
	ifs, err := net.Interfaces()
	if err != nil {
		return ""
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback == 0 {
			return i.Name
		}
	}
	return ""
}

// deviceBound is a listener of ours on 127.0.0.1 bound to a network
// device other than loopback, which shares its port with a listener bound
// to loopback; it skips the test where there is no such device.
func deviceBound(t *testing.T) net.Listener {
	t.Helper()
	dev := otherDevice()
	if dev == "" || runtime.GOOS != "linux" {
		t.Skip("needs SO_BINDTODEVICE and a network device besides loopback")
	}
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) { serr = bindToDevice(fd, dev) }); err != nil {
			return err
		}
		return serr
	}}
	l, err := lc.Listen(context.Background(), "tcp4", "127.0.0.1:0")
	if err != nil {
		t.Skipf("binding a listener to %s: %v", dev, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// A hub waiting for a backend of ours to show up on its port stops
// waiting, and fails naming the holder, once another user holds the port
// too: it used to wait on, and then fail with the bind error it saw first,
// which the supervisor takes for a failed start of the whole hub.
// (Listeners bound to different devices share a port, so ours holds it
// while the other user's arrives.)
func TestHubStopsWaitingWhenAnotherUserTakesThePort(t *testing.T) {
	ours := deviceBound(t)
	port := ours.Addr().(*net.TCPAddr).Port

	h, _ := start(t, nil) // for its guard
	env := *h.Env
	env.Dirs = adaptertest.TempDirs(t)
	env.Follow = adaptertest.FastFollow
	cfg := DefaultConfig()
	cfg.Port = port
	bg := adaptertest.ServeInBackground(New(cfg), env)
	defer bg.Stop()
	adaptertest.WaitFor(t, "the hub to wait for a backend on its port", func() bool {
		select {
		case <-bg.Done:
			t.Fatalf("Serve returned before waiting: %v", bg.Err())
		default:
		}
		return strings.Contains(bg.Logs.String(), "waiting for one")
	})

	sq := portownertest.StartWith(t, "127.0.0.1:"+strconv.Itoa(port), portownertest.Options{Device: "lo"})
	select {
	case <-bg.Done:
	case p := <-bg.Ready:
		t.Fatalf("ready on %v: the hub follows another user's listener", p)
	case <-time.After(adaptertest.WaitTimeout):
		t.Fatalf("Serve still waits beside another user's listener; logs:\n%s", bg.Logs.String())
	}
	heldBy(t, bg.Err(), port, sq.UID)
}

// A face waiting for a backend of ours to show up on its port stops
// waiting once another user holds the port too, and fails naming the
// holder; it used to wait out its settle first.
func TestFaceStopsWaitingWhenAnotherUserTakesThePort(t *testing.T) {
	ours := deviceBound(t)
	port := ours.Addr().(*net.TCPAddr).Port

	// Only a broken test waits out this settle.
	slow := adapters.FollowTiming{Poll: 5 * time.Millisecond, Settle: 2 * adaptertest.WaitTimeout}
	own := &inProcess{dirs: adaptertest.TempDirs(t), lc: hub.NewLifecycle(hub.IdleRules{}), log: slog.New(slog.DiscardHandler), port: port, follow: slow}
	defer own.stop()
	ctx, cancel := context.WithTimeout(context.Background(), adaptertest.WaitTimeout)
	defer cancel()
	type result struct {
		cl  *Client
		err error
	}
	done := make(chan result, 1)
	go func() {
		cl, err := own.start(ctx)
		done <- result{cl, err}
	}()
	// The face looks at the port first, ours alone, and waits; whenever
	// the other user's listener arrives, it is there to be seen.
	sq := portownertest.StartWith(t, "127.0.0.1:"+strconv.Itoa(port), portownertest.Options{Device: "lo"})
	r := <-done
	if r.err == nil {
		t.Fatalf("the face uses %s as its backend", r.cl.Base)
	}
	if ctx.Err() != nil {
		t.Fatalf("the face waited out its deadline beside another user's listener: %v", r.err)
	}
	heldBy(t, r.err, port, sq.UID)
}
