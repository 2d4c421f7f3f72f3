package stitchslop

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"
)

// A Remote drives a live bridge by its session file, and says the bridge
// is gone whenever its file, pid, port or key no longer stand behind it.
func TestRemote(t *testing.T) {
	b := startBridge(t, nil)
	ctx := t.Context()
	r, err := OpenRemote(ctx, b.configDir(), b.Port())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Origin != testOrigin || r.PID != os.Getpid() {
		t.Fatalf("remote %+v", r)
	}
	if _, err := r.Call(ctx, "scene.describe", nil); !errors.Is(err, ErrNoPage) {
		t.Fatalf("call with no tab: %v, want ErrNoPage", err)
	}
	if ok, err := r.Wait(ctx, 0); err != nil || ok {
		t.Fatalf("wait with no tab = %v %v", ok, err)
	}
	if err := r.Pair(ctx, "tok_second"); err != nil {
		t.Fatal(err)
	}

	p, _ := b.attach(map[string]any{"token": "tok_second"})
	p.serve(func(cmd string, args map[string]any) map[string]any {
		// A page may answer no_page itself; with its id that is its answer.
		return map[string]any{"ok": false, "error": "no_page", "command": cmd, "args": args}
	})
	out, err := r.Call(ctx, "scene.describe", []byte(`{"limit":5}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, out); got["command"] != "scene.describe" || got["args"].(map[string]any)["limit"] != float64(5) {
		t.Fatalf("envelope %s", out)
	}
	if st, err := r.Status(ctx); err != nil || !st.Connected {
		t.Fatalf("status %+v %v", st, err)
	}

	cases := []struct {
		name  string
		open  func() error
		alive bool
	}{
		{"the live bridge by origin", func() error { r, err := FindRemote(ctx, b.configDir(), testOrigin, 0); closeIf(r); return err }, true},
		{"on its port", func() error { r, err := FindRemote(ctx, b.configDir(), testOrigin, b.Port()); closeIf(r); return err }, true},
		{"another origin", func() error {
			r, err := FindRemote(ctx, b.configDir(), "https://other.test", 0)
			closeIf(r)
			return err
		}, false},
		{"another port", func() error { r, err := FindRemote(ctx, b.configDir(), testOrigin, b.Port()+1); closeIf(r); return err }, false},
		{"no session file", func() error { r, err := OpenRemote(ctx, t.TempDir(), b.Port()); closeIf(r); return err }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.open()
			if (err == nil) != tc.alive || (err != nil && !errors.Is(err, ErrBridgeGone)) {
				t.Fatalf("err = %v, want alive=%v", err, tc.alive)
			}
		})
	}

	// A key that no longer matches (another bridge took the port) and a
	// stopped bridge are both gone.
	stale := newRemote("", sessionFile{Port: b.Port(), Key: "old", Origin: testOrigin, PID: os.Getpid()})
	defer stale.Close()
	if _, err := stale.Call(ctx, "x", nil); !errors.Is(err, ErrBridgeGone) {
		t.Fatalf("stale key: %v", err)
	}
	b.Stop()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := r.Call(cctx, "x", nil); !errors.Is(err, ErrBridgeGone) {
		t.Fatalf("stopped bridge: %v", err)
	}
}

func closeIf(r *Remote) {
	if r != nil {
		r.Close()
	}
}
