package stitchslop

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

// §2.8: a control-plane request is agent activity for as long as it runs.
// A `hub stitchslop wait 600` on a bridge with --agent-idle-minutes 2 must
// not be cut by the idle exit two minutes in (it was: the wait answered
// "timeout, waiting again is fine" and the bridge was gone); the idle
// clock starts again when the request ends.
func TestControlRequestInFlightIsAgentActivity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = 2 * time.Minute
		lc := hub.NewLifecycle(standaloneRules(0, idle))
		s, err := New(&Config{Origin: testOrigin, Token: testToken})
		if err != nil {
			t.Fatal(err)
		}
		env := &adapters.Env{Log: slog.New(slog.DiscardHandler), Activity: lc.Reporter("stitchslop")}
		r := newRun(s, env, runPlace{dir: t.TempDir(), port: 8787, key: "k"})
		s.cur.Store(r)

		fired := make(chan error, 1)
		go func() { fired <- lc.Wait(context.Background()) }()
		answered := make(chan string, 1)
		go func() {
			req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8787/wait", strings.NewReader(`{"seconds":600}`))
			req.Header.Set(KeyHeader, "k")
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req)
			answered <- rec.Body.String()
		}()
		time.Sleep(9 * time.Minute)
		synctest.Wait()
		select {
		case err := <-fired:
			t.Fatalf("idle exit while an agent's wait was in flight: %v", err)
		default:
		}
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		if a := <-answered; !contains(a, `"timeout"`) {
			t.Fatalf("wait answered %s", a)
		}
		time.Sleep(idle - 2*time.Second)
		synctest.Wait()
		select {
		case err := <-fired:
			t.Fatalf("idle exit sooner than %s after the request ended: %v", idle, err)
		default:
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		select {
		case err := <-fired:
			var ie *hub.IdleError
			if !errors.As(err, &ie) {
				t.Fatalf("Wait = %v", err)
			}
		default:
			t.Fatal("no idle exit after the request ended and the bridge sat idle")
		}
	})
}

// A wait cut short because the bridge is stopping must not answer
// "timeout; waiting again is fine": the next wait finds no bridge at all.
func TestControlWaitEndedByStopSaysSo(t *testing.T) {
	b := startBridge(t, nil)
	answered := make(chan string, 1)
	key := b.S.Key()
	go func() {
		r, _ := adaptertest.Do(b.URL("/wait"), adaptertest.Request{Method: "POST", Body: []byte(`{"seconds":30}`), Header: http.Header{KeyHeader: {key}}})
		answered <- string(r.Body)
	}()
	// The request has reached its handler once it counts as agent activity.
	for deadline := time.Now().Add(frameWait); b.S.Status().LastActivity.IsZero(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the wait never arrived")
		}
	}
	b.Stop()
	select {
	case a := <-answered:
		if contains(a, `"timeout"`) || !contains(a, `"stopping"`) {
			t.Fatalf("a wait ended by the bridge stopping answered %s", a)
		}
	case <-time.After(frameWait):
		t.Fatal("the wait was not answered when the bridge stopped")
	}
}
