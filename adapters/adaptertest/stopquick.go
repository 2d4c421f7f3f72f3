package adaptertest

import (
	"testing"
	"time"

	"github.com/hubdev/hub/hub"
)

// StopsBeforeForcedClose calls stop and fails t unless it returns within
// hub.ShutdownGrace: a server whose streams end only when the grace runs
// out and the server force-closes them kept the stop waiting on a reader.
func StopsBeforeForcedClose(t testing.TB, stop func() error) {
	t.Helper()
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hub.ShutdownGrace):
		t.Fatalf("Serve still running %s after cancellation: the stuck stream was only ended by the server's forced close", hub.ShutdownGrace)
	}
}
