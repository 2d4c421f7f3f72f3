package opencode

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/plugin"
)

// TestHungServerIsBounded: an OpenCode that accepts connections and never
// answers (a stopped process) fails calls as offline instead of holding
// them, and the connection lock they take, for ever.
func TestHungServerIsBounded(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	p := fakePlugin(t, srv.URL, nil, nil)
	p.client.probeTimeout = 50 * time.Millisecond
	p.client.requestTimeout = 50 * time.Millisecond
	auth := plugin.Authority{Root: t.TempDir(), Write: true, Terminal: true}

	done := make(chan *plugin.Error, 1)
	go func() {
		_, err := callTool(p, auth, ToolWorker, `{"action":"start","prompt":"x"}`)
		pe, _ := err.(*plugin.Error)
		done <- pe
	}()
	// The listing's status must not wait behind the hung call either.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if st := p.Status(ctx); st != StateOffline {
		t.Fatalf("status %q, want %q", st, StateOffline)
	}
	select {
	case pe := <-done:
		if pe == nil || pe.Code != CodeOffline || !pe.Retryable {
			t.Fatalf("call = %+v, want retryable %s", pe, CodeOffline)
		}
	case <-ctx.Done():
		t.Fatal("the call against a hung server never returned")
	}
}
