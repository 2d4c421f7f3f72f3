package aiui

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/hub"
)

// A following shell that stopped reading (SIGSTOP, a hung terminal) left
// the prompts stream blocked in a write the request's cancellation could
// not end: the backend's shutdown then waited for http.Server.Shutdown's
// grace to run out and close every connection, so a hub with
// lifecycle.shutdown_seconds of 5 or less failed its stop with "aiui still
// running". The stream must end as soon as the backend stops.
func TestStopDoesNotWaitForAFollowerThatStoppedReading(t *testing.T) {
	h, _ := start(t, nil)
	cl := control(t, h)
	stuck := make(chan struct{})
	got := make(chan struct{}, 1)
	followed := make(chan error, 1)
	go func() {
		followed <- cl.Prompts(context.Background(), true, func(Record, []byte) error {
			select {
			case got <- struct{}{}:
			default:
			}
			<-stuck // read nothing more: the socket's buffers fill up
			return nil
		})
	}()
	t.Cleanup(func() { close(stuck); <-followed })

	body, _ := json.Marshal(map[string]string{"text": strings.Repeat("x", 3<<20)})
	for range 12 { // well past what loopback socket buffers hold
		resp, err := http.Post(h.URL("/prompt"), "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	<-got

	stopped := make(chan error, 1)
	go func() { stopped <- h.Stop() }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hub.ShutdownGrace):
		t.Fatalf("Serve still running %s after cancellation: the stuck stream was only ended by the server's forced close", hub.ShutdownGrace)
	}
}
