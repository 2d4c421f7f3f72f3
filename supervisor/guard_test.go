package supervisor

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lxzan/gws"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/ws"
)

// openHandler is a WSHandler whose Open panics when told to.
type openHandler struct{ panics bool }

func (h openHandler) Open(c *ws.Conn) ws.Session {
	if h.panics {
		panic("open boom")
	}
	return quietSession{}
}

type quietSession struct{}

func (quietSession) Message(*gws.Message) {}
func (quietSession) Closed(error)         {}

// wsServe serves GET / and a WebSocket at /ws with the real hub helpers
// (Listen, Sockets, ServeHTTP); the handler's Open panics in the runs
// panicOpen names.
func wsServe(panicOpen func(run int) bool) func(context.Context, *adapters.Env, int) error {
	return func(ctx context.Context, env *adapters.Env, run int) error {
		ln, port, err := hub.Listen([]int{0})
		if err != nil {
			return err
		}
		sockets := &ws.Sockets{}
		ep := sockets.Endpoint(openHandler{panics: panicOpen(run)}, ws.Options{Log: env.Log})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/ws" {
				ep.Serve(w, r)
				return
			}
			fmt.Fprintf(w, "run %d", run)
		})
		env.Ready(port)
		return hub.ServeHTTP(ctx, ln, h, sockets, env.Log)
	}
}

func get(t *testing.T, port int) string {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestPanicsOutsideServeRestartOnlyThatAdapter is issue 15 row 10: a panic
// in a timer callback an adapter started and one in a WebSocket handler's
// Open (gws's OnOpen, which gws does not recover) used to kill the whole
// process. Now each is logged with its stack and restarts its own
// adapter, while another adapter serves on: never restarted, its socket
// still open.
func TestPanicsOutsideServeRestartOnlyThatAdapter(t *testing.T) {
	opener := &fakeAdapter{name: "opener", serve: wsServe(func(run int) bool { return run == 1 })}
	timer := &fakeAdapter{name: "timer", serve: func(ctx context.Context, env *adapters.Env, run int) error {
		env.Ready(4000 + run)
		if run == 1 {
			env.Guard.AfterFunc("test timer", time.Millisecond, func() { panic("timer boom") })
		}
		<-ctx.Done()
		return nil
	}}
	steady := &fakeAdapter{name: "steady", serve: wsServe(func(int) bool { return false })}
	s := newSupervisor(t, nil, opener, timer, steady)
	cancel, errc, ready := serveInBackground(s)
	<-ready
	steadyPort := statusOf(s, "steady").Ports[0]
	steadyWS, err := adaptertest.Dial(fmt.Sprintf("ws://127.0.0.1:%d/ws", steadyPort), adaptertest.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer steadyWS.Close()

	// A page dials the opener: its handler's Open panics.
	if c, err := adaptertest.Dial(fmt.Sprintf("ws://127.0.0.1:%d/ws", statusOf(s, "opener").Ports[0]), adaptertest.DialOptions{}); err == nil {
		select {
		case <-c.Closed():
		case <-time.After(adaptertest.WaitTimeout):
			t.Fatal("the socket whose Open panicked was not dropped")
		}
	}
	for _, name := range []string{"opener", "timer"} {
		adaptertest.WaitFor(t, name+" restarted after its panic", func() bool {
			st := statusOf(s, name)
			return st.Restarts == 1 && st.State == adapters.StateRunning
		})
	}
	if e := statusOf(s, "opener").LastError; !strings.Contains(e, "panic: open boom (in websocket open)") {
		t.Errorf("opener's last error = %q", e)
	}
	if e := statusOf(s, "timer").LastError; !strings.Contains(e, "panic: timer boom (in test timer)") {
		t.Errorf("timer's last error = %q", e)
	}
	// The restarted opener serves sockets again.
	c, err := adaptertest.Dial(fmt.Sprintf("ws://127.0.0.1:%d/ws", statusOf(s, "opener").Ports[0]), adaptertest.DialOptions{})
	if err != nil {
		t.Fatalf("the restarted adapter: %v", err)
	}
	c.Close()

	// The other adapter never stopped: same run, same socket, still serving.
	if st := statusOf(s, "steady"); st.Restarts != 0 || steady.runs.Load() != 1 {
		t.Fatalf("steady = %+v after %d runs, want never restarted", st, steady.runs.Load())
	}
	if got := get(t, steadyPort); got != "run 1" {
		t.Fatalf("steady answered %q", got)
	}
	select {
	case <-steadyWS.Closed():
		t.Fatal("the other adapter's socket was closed")
	default:
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("Serve = %v", err)
	}
}
