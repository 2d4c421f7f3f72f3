package hub_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/hub"
)

// A large body takes its Content-Length from the route's budget before it
// is read: one that finds no room waits, and past its own body deadline
// gets 503 (ErrBusy); once the body holding the room is done, the next
// one is read; the budget ends whole.
func TestReadJSONBodyWithinBudget(t *testing.T) {
	const room = 200 << 10
	budget := hub.NewBudget(room)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := int64(100 << 10)
		if r.URL.Path == "/big" {
			limit = 190 << 10
		}
		var v struct{ T string }
		switch err := hub.ReadJSONBodyWithin(r, limit, budget, &v); {
		case errors.Is(err, hub.ErrBusy):
			w.WriteHeader(http.StatusServiceUnavailable)
		case err != nil:
			w.WriteHeader(http.StatusBadRequest)
		default:
			fmt.Fprint(w, len(v.T))
		}
	})
	// /big's body may take 6.2 s, /small's 3.4 s (waiting included)
	pace := hub.BodyPace{Base: 300 * time.Millisecond, MinRate: 32 << 10}
	addr, _ := serveWith(t, hub.WithBodyPace(context.Background(), pace), h)

	post := func(path string, size int) (net.Conn, []byte) {
		c := dialRaw(t, addr)
		body := []byte(`{"T":"` + strings.Repeat("x", size-8) + `"}`)
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n", path, addr, len(body))
		return c, body
	}
	holder, hb := post("/big", 180<<10)
	holder.Write(hb[:1000])
	waitFor(t, "the big body to take its room", func() bool { return budget.Free() == room-180<<10 })

	busy, bb := post("/small", 90<<10)
	busy.Write(bb)
	if got, err := status(busy, bufio.NewReader(busy), 10*time.Second); err != nil || got != http.StatusServiceUnavailable {
		t.Fatalf("a body with no room: %d, %v; want 503", got, err)
	}

	waiter, wb := post("/small", 90<<10)
	waiter.Write(wb)
	wr := bufio.NewReader(waiter)
	if got, err := status(waiter, wr, 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a body with no room was answered at once (%d, %v)", got, err)
	}
	holder.Write(hb[1000:])
	if got, err := status(holder, bufio.NewReader(holder), 10*time.Second); err != nil || got != 200 {
		t.Fatalf("the big body: %d, %v", got, err)
	}
	if got, err := status(waiter, wr, 10*time.Second); err != nil || got != 200 {
		t.Fatalf("the waiting body once room came back: %d, %v", got, err)
	}
	waitFor(t, "the budget to be whole again", func() bool { return budget.Free() == room })
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
