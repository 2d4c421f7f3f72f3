package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubdev/hub/adapters"
)

// bridgeAdapter is a fake adapter that is also a ToolBridge.
type bridgeAdapter struct{ fakeAdapter }

func (*bridgeAdapter) BridgeTools() ([]adapters.BridgeTool, error) { return nil, nil }
func (*bridgeAdapter) BridgeClassify(string, json.RawMessage) (bool, error) {
	return true, nil
}
func (*bridgeAdapter) BridgeCall(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, nil
}

// Bridge offers an adapter only while it runs, and only when it is a
// ToolBridge: never a disabled, unknown, crashed-and-restarting or
// stopped one.
func TestBridgeOnlyWhileRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		crash := make(chan struct{})
		b := &bridgeAdapter{fakeAdapter{name: "page", serve: func(ctx context.Context, env *adapters.Env, run int) error {
			env.Ready(3333)
			if run > 1 {
				<-ctx.Done()
				return nil
			}
			select {
			case <-ctx.Done():
				return nil
			case <-crash:
				return errors.New("crashed")
			}
		}}}
		plain := &fakeAdapter{name: "plain", serve: healthy}
		s := newSupervisor(t, nil, &b.fakeAdapter, plain)
		s.units[0].adapter = b // the factory built the embedded fake
		has := func(name string) bool { _, ok := s.Bridge(name); return ok }
		if has("page") {
			t.Fatal("offered before it ran")
		}
		cancel, errc, ready := serveInBackground(s)
		<-ready
		for _, tc := range []struct {
			name string
			want bool
		}{{"page", true}, {"plain", false}, {"zoff", false}, {"zneeds", false}, {"zstub", false}, {"nope", false}} {
			if has(tc.name) != tc.want {
				t.Errorf("Bridge(%q) ok = %v, want %v", tc.name, !tc.want, tc.want)
			}
		}
		close(crash)
		synctest.Wait()
		if st := statusOf(s, "page"); st.State != adapters.StateRestarting || has("page") {
			t.Fatalf("restarting: state %s, offered %v", st.State, has("page"))
		}
		time.Sleep(time.Minute) // past the first backoff: it runs again
		synctest.Wait()
		if !has("page") {
			t.Fatal("not offered again after its restart")
		}
		cancel()
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		if has("page") {
			t.Fatal("offered after the hub stopped")
		}
	})
}
