package aiui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
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

	adaptertest.StopsBeforeForcedClose(t, h.Stop)
}

// Every prompt handed to a following shell before the backend stops
// reaches it: the stream writes what it already holds before it goes,
// rather than dropping it for the stop (found as a flaky shell_faces
// script: the last prompt before `kill -INT` went missing). Here the
// shell holds off reading until the stop has begun, so prompts are still
// waiting in its stream when it does.
func TestFollowerGetsEveryPromptHandedToItBeforeTheStop(t *testing.T) {
	h, s := start(t, nil)
	cl := control(t, h)
	gate := make(chan struct{})
	var mu sync.Mutex
	var got []string
	followed := make(chan error, 1)
	go func() {
		followed <- cl.Prompts(context.Background(), true, func(r Record, _ []byte) error {
			<-gate
			mu.Lock()
			got = append(got, r.Text[:12])
			mu.Unlock()
			return nil
		})
	}()
	adaptertest.WaitFor(t, "the shell to follow", func() bool { return s.cur.Load().outbox.FollowerCount() == 1 })
	const n = 150
	for i := range n {
		// big enough that the socket fills and prompts wait their turn
		body, _ := json.Marshal(map[string]string{"text": fmt.Sprintf("prompt %04d ", i) + strings.Repeat("x", 64<<10)})
		resp, err := http.Post(h.URL("/prompt"), "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	stopped := make(chan error, 1)
	go func() { stopped <- h.Stop() }()
	adaptertest.WaitFor(t, "the stop to begin (the port closed)", func() bool {
		c, err := net.Dial("tcp4", h.Addr())
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	close(gate)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	<-followed
	mu.Lock()
	defer mu.Unlock()
	if len(got) != n {
		t.Fatalf("the shell got %d of the %d prompts handed to it", len(got), n)
	}
}
