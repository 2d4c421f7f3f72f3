package aiui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/aiui/channel"
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

	adaptertest.StopsBeforeForcedClose(t, h.Stop)
}

// Every prompt handed to a following shell before the backend stops
// reaches it: the stream writes what it already holds before it goes,
// rather than dropping it for the stop (found as a flaky shell_faces
// script: the last prompt before `kill -INT` went missing), and for as long
// as the shell goes on reading, not for a fixed time from the stop: a
// shell that reads, but needs more than hub.StreamDrain for what is still
// waiting (a loaded machine, a terminal drawing long prompts), got only
// what fit in the first 2 s (found as this test failing under load with
// "got 107 of the 150 prompts": the drain's deadline cut a reader that was
// reading). Here the shell reads nothing until the stop has begun, so
// prompts are still waiting in its stream when it does; then it reads at
// once, or one prompt every 300 ms: 3 s in all, past hub.StreamDrain, yet
// never 2 s without taking one, and within the stop's grace.
func TestFollowerGetsEveryPromptHandedToItBeforeTheStop(t *testing.T) {
	const n = 10
	for _, tc := range []struct {
		name string
		pace time.Duration
	}{
		{"reading at once", 0},
		{"reading one every 300ms", 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.pace > 0 && (n*tc.pace <= hub.StreamDrain || n*tc.pace >= hub.ShutdownGrace) {
				t.Fatalf("the pace must make the drain outlast hub.StreamDrain within hub.ShutdownGrace")
			}
			synctest.Test(t, func(t *testing.T) {
				p := servePipe(t)
				sh := p.follow(t)
				for i := range n {
					p.o.Deliver(channel.Prompt{Text: fmt.Sprintf("prompt %02d ", i) + strings.Repeat("x", 16<<10)})
				}
				synctest.Wait() // the stream waits to write the first; the rest wait in its queue
				p.stop()
				synctest.Wait()
				var got []string
				var end error
				for {
					time.Sleep(tc.pace)
					r, err := sh.next()
					if err != nil {
						end = err
						break
					}
					got = append(got, r.Text[:9])
				}
				if err := p.wait(); err != nil {
					t.Fatal(err)
				}
				if len(got) != n || end != io.EOF {
					t.Fatalf("the shell got %d of the %d prompts handed to it (%q), then %v", len(got), n, got, end)
				}
			})
		})
	}
}

// A shell that stopped reading is cut StreamDrain into the stop, and what
// it was handed but never got is not lost with it: the record said the
// shell had read those prompts, so no face would ever be given them. They
// are unread again, for the next face or `hub aiui prompts`; the one it
// printed stays the shell's.
func TestPromptsAStoppedShellNeverGotAreUnreadAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := servePipe(t)
		sh := p.follow(t)
		const n = 5
		for i := range n {
			p.o.Deliver(channel.Prompt{Text: fmt.Sprintf("prompt %02d ", i) + strings.Repeat("x", 16<<10)})
		}
		if r, err := sh.next(); err != nil || r.Text[:9] != "prompt 00" {
			t.Fatalf("first prompt: %.9q, %v", r.Text, err)
		}
		// and reads nothing more
		p.stop()
		if err := p.wait(); err != nil {
			t.Fatal(err)
		}
		recs := ReadRecord(p.o.path)
		var to []string
		for _, r := range recs {
			to = append(to, r.DeliveredTo)
		}
		if want := []string{"shell", "", "", "", ""}; fmt.Sprint(to) != fmt.Sprint(want) {
			t.Fatalf("deliveredTo in the record after the stop: %q, want %q", to, want)
		}
		if got := p.o.Pending(); got != n-1 {
			t.Fatalf("%d prompts pending, want the %d the shell never got", got, n-1)
		}
		f := p.o.Attach("next-face", "")
		if ev := next(t, p.o, f); ev.Prompt == nil || ev.Prompt.Text[:9] != "prompt 01" {
			t.Fatalf("the next face was given %+v, want prompt 01", ev)
		}
	})
}
