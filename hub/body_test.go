package hub_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

// testPace is short enough for a test, long enough for a client that sends
// its body at once on a loaded machine.
var testPace = hub.BodyPace{Base: 250 * time.Millisecond, MinRate: 1 << 20}

// serve runs h under hub.ServeHTTP with testPace until the test ends.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	addr, _ := serveWith(t, hub.WithBodyPace(context.Background(), testPace), h)
	return addr
}

func TestBodyPaceTimeout(t *testing.T) {
	p := hub.BodyPace{Base: 10 * time.Second, MinRate: 512 << 10}
	if got := p.Timeout(4 << 20); got != 18*time.Second {
		t.Fatalf("Timeout(4 MiB) = %v, want 18s", got)
	}
	if got := (hub.BodyPace{}).Timeout(10); got != 10*time.Second {
		t.Fatalf("zero rate: %v", got)
	}
}

// TestSlowBodyIsCutOff is issue 15 row 5: a body that trickles one byte at
// a time is cut off at its deadline, whether the route reads it
// (ReadJSONBody, sized by the route's limit) or answers without reading it
// (the server's discard of the rest is bounded too).
func TestSlowBodyIsCutOff(t *testing.T) {
	readErr := make(chan error, 1)
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/unread" {
			hub.WriteJSON(w, http.StatusForbidden, map[string]any{"ok": false})
			return
		}
		var v any
		err := hub.ReadJSONBody(r, 4<<10, &v)
		readErr <- err
		hub.WriteJSON(w, http.StatusBadRequest, map[string]any{"ok": false})
	}))
	const n = 100 // 5 s at one byte per 50 ms: far past the deadline
	res := adaptertest.Trickle(t, addr, "POST", "/read", nil, n, 50*time.Millisecond)
	if !res.Cut || res.Sent >= n {
		t.Fatalf("route reading the body: %+v, want it cut off before the body was complete", res)
	}
	if err := <-readErr; !errors.Is(err, hub.ErrBodyTooSlow) {
		t.Fatalf("ReadJSONBody = %v, want ErrBodyTooSlow", err)
	}
	res = adaptertest.Trickle(t, addr, "POST", "/unread", nil, n, 50*time.Millisecond)
	if !res.Cut || res.Sent >= n || res.Status != http.StatusForbidden {
		t.Fatalf("route not reading the body: %+v, want 403 and the connection cut", res)
	}
}

// TestLongPollAndStreamOutliveTheBodyDeadline: once a body has been read,
// its deadline is gone, so a long poll after it (stitchslop POST /wait) and
// a GET stream (aiui's follow routes) keep their request context and their
// connection for many times the body deadline; the connection then serves
// another request.
func TestLongPollAndStreamOutliveTheBodyDeadline(t *testing.T) {
	hold := 4 * testPace.Timeout(4<<10)
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/wait":
			var v struct{ Seconds float64 }
			if err := hub.ReadJSONBody(r, 4<<10, &v); err != nil {
				hub.WriteJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
				return
			}
			select {
			case <-r.Context().Done():
				return // the client sees no answer: the test fails
			case <-time.After(hold):
			}
			hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
		case "/stream":
			for i := range 4 {
				fmt.Fprintf(w, "line %d\n", i)
				http.NewResponseController(w).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(hold / 4):
				}
			}
		}
	}))
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	for range 2 { // the second poll reuses the connection
		resp, err := client.Post("http://"+addr+"/wait", "application/json", strings.NewReader(`{"seconds":600}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"ok":true`)) {
			t.Fatalf("long poll: %d %s", resp.StatusCode, body)
		}
	}
	resp, err := client.Get("http://" + addr + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) != 4 {
		t.Fatalf("stream delivered %q, want 4 lines", lines)
	}
}
