package rawio

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hubdev/hub/internal/race"
	"golang.org/x/sys/unix"
)

// queued is how many bytes c has received and not yet read (the loopback
// delivers a write before the write returns).
func queued(t *testing.T, c *net.TCPConn) int {
	t.Helper()
	sc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var ierr error
	if err := sc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }); err != nil {
		t.Fatal(err)
	}
	if ierr != nil {
		t.Fatal(ierr)
	}
	return n
}

// handle reads one 2-byte message from rc and writes answer while writes
// are held, as a WebSocket reader handles a frame.
func handle(t *testing.T, rc *rawConn, want, answer string) {
	t.Helper()
	buf := make([]byte, 2)
	if _, err := io.ReadFull(rc, buf); err != nil || string(buf) != want {
		t.Fatalf("read %q, %v; want %q", buf, err, want)
	}
	rc.HoldWrites(true)
	defer rc.HoldWrites(false)
	if n, err := rc.Write([]byte(answer)); n != len(answer) || err != nil {
		t.Fatalf("held write = %d, %v", n, err)
	}
}

// Answers to messages that arrived together stay held while there is
// more to read, and leave together, in order, once the reader would wait.
func TestHeldWritesLeaveWhenTheReaderWouldWait(t *testing.T) {
	rc, cl := tcpPair(t)
	cl.Write([]byte("m1m2"))
	handle(t, rc, "m1", "a1")
	handle(t, rc, "m2", "a2")
	if n := queued(t, cl); n != 0 {
		t.Fatalf("the peer has %d bytes while the reader still had input", n)
	}
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 2)
		io.ReadFull(rc, buf) // finds nothing, sends what is held, waits
		got <- string(buf)
	}()
	cl.SetReadDeadline(time.Now().Add(time.Minute))
	buf := make([]byte, 4)
	if _, err := io.ReadFull(cl, buf); err != nil || string(buf) != "a1a2" {
		t.Fatalf("peer read %q, %v; want the answers in order", buf, err)
	}
	cl.Write([]byte("m3"))
	if m := <-got; m != "m3" {
		t.Fatalf("the waiting read got %q", m)
	}
}

// A write that is not held, one too large to hold, Flush and Close each
// send what is held first.
func TestHeldWritesLeaveBeforeOtherWrites(t *testing.T) {
	big := bytes.Repeat([]byte("b"), heldMax)
	for _, tc := range []struct {
		name string
		then func(rc *rawConn)
		want string // what the peer reads after the held "h1"
	}{
		{"write", func(rc *rawConn) { rc.Write([]byte("w2")) }, "w2"},
		{"too large to hold", func(rc *rawConn) {
			rc.HoldWrites(true)
			rc.Write(big)
			rc.HoldWrites(false)
		}, string(big)},
		{"flush", func(rc *rawConn) { rc.Flush() }, ""},
		{"close", func(rc *rawConn) { rc.Close() }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, cl := tcpPair(t)
			cl.Write([]byte("m1"))
			handle(t, rc, "m1", "h1")
			if n := queued(t, cl); n != 0 {
				t.Fatalf("the peer has %d bytes before anything sent the held ones", n)
			}
			tc.then(rc)
			cl.SetReadDeadline(time.Now().Add(time.Minute))
			want := "h1" + tc.want
			buf := make([]byte, len(want))
			if _, err := io.ReadFull(cl, buf); err != nil || string(buf) != want {
				t.Fatalf("peer read %.20q…, %v; want %.20q…", buf, err, want)
			}
		})
	}
}

// When sending what is held fails, the writes after it fail too, held
// ones included: the failure is not lost with the bytes.
func TestAFailedSendOfHeldBytesFailsLaterWrites(t *testing.T) {
	rc, cl := tcpPair(t)
	cl.Write([]byte("m1"))
	handle(t, rc, "m1", "h1")
	cl.SetLinger(0)
	cl.Close() // a reset
	// Wait for the reset on the wrapped connection: rawConn's Read would
	// send the held bytes first, perhaps before the reset has arrived.
	rc.Conn.SetReadDeadline(time.Now().Add(time.Minute))
	if _, err := rc.Conn.Read(make([]byte, 1)); err == nil {
		t.Fatal("read after the peer's reset succeeded")
	}
	rc.Flush() // fails: the connection was reset
	rc.HoldWrites(true)
	if _, err := rc.Write([]byte("w2")); err == nil {
		t.Fatal("a held write after a failed send succeeded")
	}
}

// Writers holding and not holding, and a reader that sends what is held
// whenever it would wait, lose nothing and keep each writer's order.
func TestHeldWritesUnderConcurrentWriters(t *testing.T) {
	rc, cl := tcpPair(t)
	const writers, each = 4, 500
	var wg sync.WaitGroup
	go func() {
		buf := make([]byte, 64)
		for {
			if _, err := rc.Read(buf); err != nil {
				return
			}
		}
	}()
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if w%2 == 0 {
					rc.HoldWrites(i%3 != 0)
				}
				if _, err := fmt.Fprintf(rc, "%d:%04d;", w, i); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	rc.HoldWrites(false)
	rc.Flush()
	cl.Write([]byte("x")) // the reader reads, would wait, sends the rest
	want := writers * each * len("0:0000;")
	cl.SetReadDeadline(time.Now().Add(time.Minute))
	buf := make([]byte, want)
	if _, err := io.ReadFull(cl, buf); err != nil {
		t.Fatalf("read %v", err)
	}
	next := make([]int, writers)
	for _, rec := range bytes.Split(bytes.TrimSuffix(buf, []byte(";")), []byte(";")) {
		var w, i int
		if _, err := fmt.Sscanf(string(rec), "%d:%d", &w, &i); err != nil || i != next[w] {
			t.Fatalf("record %q: writer %d's next is %d", rec, w, next[w])
		}
		next[w]++
	}
}

// Holding a message's few small answers allocates nothing once the
// socket's buffer exists, and a burst's larger buffer is let go once sent
// rather than kept for the socket's life.
func TestHeldBufferIsReusedOrLetGo(t *testing.T) {
	rc, cl := tcpPair(t)
	ack := []byte(`{"ok":true}`)
	buf := make([]byte, 4*len(ack))
	allocs := testing.AllocsPerRun(100, func() {
		rc.HoldWrites(true)
		for range 4 {
			rc.Write(ack)
		}
		rc.HoldWrites(false)
		rc.Flush()
		if _, err := io.ReadFull(cl, buf); err != nil {
			t.Fatal(err)
		}
	})
	if !race.Enabled && allocs != 0 {
		t.Fatalf("%v allocations per held burst of four acks, want 0", allocs)
	}
	rc.HoldWrites(true)
	rc.Write(make([]byte, heldKeep+1))
	rc.HoldWrites(false)
	rc.Flush()
	rc.wmu.Lock()
	kept := cap(rc.held)
	rc.wmu.Unlock()
	if kept != 0 {
		t.Fatalf("a %d-byte buffer is kept after a %d-byte burst", kept, heldKeep+1)
	}
}
