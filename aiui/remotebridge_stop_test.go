package aiui

import (
	"net"
	"net/http"
	"os"

	"context"
	"encoding/json"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
	"testing"
	"time"

	"github.com/hubdev/hub/aiui/tools"
)

// A backend that stops while a page still holds a call it routed cannot
// say whether the page ran it: the remote bridge answers OUTCOME_UNKNOWN
// (retryable, with the hint to check the page), as the in-process one
// does, not the page's own refusal.
func TestRemoteBridgeBackendStopsMidCall(t *testing.T) {
	h, _ := start(t, nil)
	got := make(chan struct{})
	toolsPage(t, h, `{"v":1,"type":"register","ns":"t","tools":[{"name":"set-thing"}]}`, func(map[string]any) string {
		close(got) // runs it, never answers
		return `{}`
	})
	b := NewRemoteBridge(h.Dirs)
	errc := make(chan error, 1)
	go func() {
		_, err := b.BridgeCall(context.Background(), "set-thing", json.RawMessage(`{}`))
		errc <- err
	}()
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the page never got the call")
	}
	h.Stop()
	te := bridgeErr(t, <-errc)
	if te.Code != tools.OutcomeUnknown || !te.Retryable || te.Hint == "" {
		t.Fatalf("stopped mid-call: %+v", te)
	}
}

// A backend whose connection breaks once the call was sent (killed) leaves
// the call's fate unknown: OUTCOME_UNKNOWN, retryable, with the hint to
// check the page before retrying.
func TestRemoteBridgeCallLost(t *testing.T) {
	dirs := adaptertest.TempDirs(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/control/info":
			hub.WriteJSON(w, 200, map[string]any{"pid": 1})
		case "/control/tools":
			hub.WriteJSON(w, 200, map[string]any{"ok": true, "clients": 1,
				"registrations": []tools.Registration{{NS: "t", ClientID: "c1", Tools: []tools.Tool{{Name: "set-thing"}}}}})
		default: // the call: the process dies before it answers
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Close()
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	cf, _ := json.Marshal(ControlFile{Schema: 1, PID: os.Getpid(), Port: ln.Addr().(*net.TCPAddr).Port, Key: "k", Kind: KindServe})
	if err := hub.EnsurePrivateDir(StateDir(dirs)); err != nil {
		t.Fatal(err)
	}
	if err := hub.WriteFileAtomic(ControlPath(dirs), cf, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = NewRemoteBridge(dirs).BridgeCall(context.Background(), "set-thing", json.RawMessage(`{}`))
	te := bridgeErr(t, err)
	if te.Code != tools.OutcomeUnknown || !te.Retryable || te.Hint == "" {
		t.Fatalf("lost call: %+v", te)
	}
}
