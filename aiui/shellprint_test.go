package aiui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"

	"github.com/hubdev/hub/aiui/channel"
)

// cutFlushWriter is a response whose connection goes after ok flushes:
// writes still land in its buffer, flushes fail.
type cutFlushWriter struct {
	*httptest.ResponseRecorder
	ok int
}

func (w *cutFlushWriter) FlushError() error {
	if w.ok == 0 {
		return errors.New("write tcp 127.0.0.1:8787->127.0.0.1:50000: connection reset by peer")
	}
	w.ok--
	w.ResponseRecorder.Flush()
	return nil
}

func (w *cutFlushWriter) Flush() { _ = w.FlushError() }

// TestPromptsWhoseFlushFailedAreUnreadAgain: a shell's prompts stream
// (`hub aiui prompts`, with or without --follow) takes prompts for the
// shell (the record says the shell read them) and prints them one line
// at a time. A line is written into the response's buffer before the
// flush sends it, and its end, to the connection; when that flush fails
// the shell never got the line. The prompt is then not the shell's: it
// is unread again, as is every one the stream held after it, while the
// one whose flush went through stays read, and the stream ends. A failed
// flush was taken for a printed prompt, and the stream went on.
func TestPromptsWhoseFlushFailedAreUnreadAgain(t *testing.T) {
	for _, tc := range []struct {
		name   string
		follow bool
	}{{"pending, in the snapshot", false}, {"delivered while following", true}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				o := newTestOutbox(t, 10)
				b := &backend{log: slog.New(slog.DiscardHandler), outbox: o}
				deliver := func() {
					for i := range 3 {
						o.Deliver(channel.Prompt{Text: fmt.Sprint("p", i)})
					}
				}
				target := "/control/prompts"
				if tc.follow {
					target += "?follow=1"
				} else {
					deliver()
				}
				// the headers' flush and the first prompt's go through
				w := &cutFlushWriter{ResponseRecorder: httptest.NewRecorder(), ok: 2}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				done := make(chan struct{})
				go func() {
					defer close(done)
					b.controlPrompts(w, httptest.NewRequestWithContext(ctx, http.MethodGet, target, nil))
				}()
				synctest.Wait()
				if tc.follow {
					deliver()
					synctest.Wait()
				}
				select {
				case <-done:
				default:
					t.Error("the stream went on after its connection was cut")
					cancel() // the backend stops: the stream ends
					<-done
				}
				var to []string
				for _, r := range ReadRecord(o.path) {
					to = append(to, r.Text+"="+r.DeliveredTo)
				}
				if want := "[p0=shell p1= p2=]"; fmt.Sprint(to) != want {
					t.Fatalf("record after the cut: %v, want %s", to, want)
				}
				if o.Pending() != 2 || o.FollowerCount() != 0 {
					t.Fatalf("pending %d, %d followers, want 2 and 0", o.Pending(), o.FollowerCount())
				}
			})
		})
	}
}
