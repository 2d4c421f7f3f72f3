package ws

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/hubdev/hub/hub"
)

// wsFrame encodes a masked client frame header + payload.
func wsFrame(op byte, fin bool, payload []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	out := []byte{b0}
	switch n := len(payload); {
	case n < 126:
		out = append(out, 0x80|byte(n))
	case n < 1<<16:
		out = append(out, 0x80|126, 0, 0)
		binary.BigEndian.PutUint16(out[2:], uint16(n))
	default:
		out = append(out, 0x80|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	out = append(out, 1, 2, 3, 4) // mask key; the scan never unmasks
	return append(out, payload...)
}

const testLimit = 4 << 10

func TestFrameScan(t *testing.T) {
	small := wsFrame(1, true, []byte(`{"token":"t"}`))
	cases := []struct {
		name   string
		stream []byte
		ok     bool
	}{
		{"small text frame", small, true},
		{"exactly 4 KiB", wsFrame(1, true, make([]byte, testLimit)), true},
		{"4 KiB + 1", wsFrame(1, true, make([]byte, testLimit+1)), false},
		{"pings first, then a small frame", append(append(wsFrame(9, true, []byte("p")), wsFrame(10, true, nil)...), small...), true},
		{"fragments summing past 4 KiB", append(wsFrame(1, false, make([]byte, 3000)), wsFrame(0, true, make([]byte, 3000))...), false},
		{"fragments within 4 KiB", append(wsFrame(1, false, make([]byte, 2000)), wsFrame(0, true, make([]byte, 2000))...), true},
		{"oversized control frame", wsFrame(9, true, make([]byte, 200)), false},
		{"small frame then a big one (still before auth)", append(small, wsFrame(1, true, make([]byte, 1<<20))...), false},
		{"several small messages", append(append(small, small...), small...), true},
	}
	huge := []byte{0x81, 0x80 | 127}
	huge = binary.BigEndian.AppendUint64(huge, 1<<40)
	huge = append(huge, 1, 2, 3, 4) // mask key: the header is complete, no payload yet
	cases = append(cases, struct {
		name   string
		stream []byte
		ok     bool
	}{"declared 1 TiB", huge, false})
	for _, tc := range cases {
		for _, chunk := range []int{1, 3, 7, 4096} {
			var f frameScan
			var err error
			for s := tc.stream; len(s) > 0 && err == nil; {
				k := min(chunk, len(s))
				err = f.feed(s[:k], testLimit)
				s = s[k:]
			}
			if (err == nil) != tc.ok {
				t.Errorf("%s (chunks of %d): err = %v, want ok=%v", tc.name, chunk, err, tc.ok)
			}
		}
	}
}

// FuzzFrameScan: the scan's verdict must not depend on how the stream is
// split across reads.
func FuzzFrameScan(f *testing.F) {
	f.Add(wsFrame(1, true, []byte(`{"token":"t"}`)), 1)
	f.Add(wsFrame(1, true, make([]byte, testLimit+1)), 5)
	f.Add(append(wsFrame(9, true, []byte("x")), wsFrame(1, false, make([]byte, 10))...), 2)
	f.Add([]byte{0x81, 0xff, 0, 0, 0, 0, 0, 0, 0, 0}, 3)
	f.Fuzz(func(t *testing.T, stream []byte, chunk int) {
		if chunk <= 0 || chunk > 64 {
			chunk = 1 + (chunk&63+64)%64
		}
		var whole, split frameScan
		e1 := whole.feed(stream, testLimit)
		var e2 error
		for s := stream; len(s) > 0 && e2 == nil; {
			k := min(chunk, len(s))
			e2 = split.feed(s[:k], testLimit)
			s = s[k:]
		}
		if (e1 == nil) != (e2 == nil) || whole.messages != split.messages {
			t.Fatalf("whole: %v messages=%d; split by %d: %v messages=%d", e1, whole.messages, chunk, e2, split.messages)
		}
		if e1 == nil && whole.total > testLimit {
			t.Fatal("accepted more than 4 KiB")
		}
		// Reads bounded by room never pass a frame's end, and agree too.
		var framed frameScan
		var e3 error
		for s := stream; len(s) > 0 && e3 == nil; {
			k := min(uint64(chunk), uint64(len(s)), framed.room())
			if k == 0 {
				t.Fatal("room is 0")
			}
			e3 = framed.feed(s[:k], testLimit)
			s = s[k:]
		}
		if (e1 == nil) != (e3 == nil) || whole.messages != framed.messages {
			t.Fatalf("whole: %v messages=%d; read by room: %v messages=%d", e1, whole.messages, e3, framed.messages)
		}
		// After authentication the scan reports the same data frame
		// headers however the stream is split.
		headers := func(chunk int) (got []string, err error) {
			var f frameScan
			note := func(op byte, plen uint64, fin bool) error {
				got = append(got, fmt.Sprint(op, plen, fin))
				return nil
			}
			for s := stream; len(s) > 0 && err == nil; {
				k := min(chunk, len(s))
				err = f.scan(s[:k], note)
				s = s[k:]
			}
			return got, err
		}
		h1, e4 := headers(len(stream) + 1)
		h2, e5 := headers(chunk)
		if (e4 == nil) != (e5 == nil) || !slices.Equal(h1, h2) {
			t.Fatalf("headers whole: %v %v; split by %d: %v %v", h1, e4, chunk, h2, e5)
		}
	})
}

// A read that must wait for room in the budget first runs beforeWait (the
// socket sends the answers it holds: its peer may wait for them before it
// sends anything that frees room); one that finds room does not.
func TestGuardRunsBeforeWaitOnlyBeforeWaitingForTheBudget(t *testing.T) {
	const msg = 512 << 10
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprint("budget full: ", full), func(t *testing.T) {
			b := hub.NewBudget(1 << 20)
			if full && !b.TryAcquire(1<<20) {
				t.Fatal("a new budget has no room")
			}
			client, server := net.Pipe()
			defer client.Close()
			g := newGuardReader(server, testLimit, b, time.Minute, 1<<20)
			g.authenticated()
			ran := 0
			g.beforeWait = func() {
				ran++
				b.Release(1 << 20) // what the peer's answer frees
			}
			go client.Write(wsFrame(2, true, make([]byte, msg)))
			if _, err := io.ReadFull(g, make([]byte, 64)); err != nil {
				t.Fatalf("read: %v", err)
			}
			if want := map[bool]int{false: 0, true: 1}[full]; ran != want {
				t.Fatalf("beforeWait ran %d times, want %d", ran, want)
			}
			if free := b.Free(); free != 1<<20-msg {
				t.Fatalf("free %d after the message took its bytes, want %d", free, 1<<20-msg)
			}
		})
	}
}
