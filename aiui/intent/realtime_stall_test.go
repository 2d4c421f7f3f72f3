package intent

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// stalledUpstream accepts one WebSocket handshake and then never reads
// again: an upstream (or a network path) that stopped taking bytes.
func stalledUpstream(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 1)
	t.Cleanup(func() {
		ln.Close()
		select {
		case c := <-conns:
			c.Close()
		default:
		}
	})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		conns <- c
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		h := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		c.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
			"Sec-WebSocket-Accept: " + base64.StdEncoding.EncodeToString(h[:]) + "\r\n\r\n"))
		// and never read again
	}()
	return "http://" + ln.Addr().String() + "/v1"
}

// TestRealtimeCloseWithStalledUpstream: an upstream that stops reading
// mid-turn blocks the session's writer; closing the session (fin, cancel,
// or the page's socket dropping) must still return, or the page socket's
// close path, and with it the backend's shutdown, waits forever.
func TestRealtimeCloseWithStalledUpstream(t *testing.T) {
	finals := make(chan error, 4)
	sess, err := OpenAIRealtime(stalledUpstream(t))(context.Background(), "sk-rt", "m", "", RealtimeEvents{
		Final: func(_ int, _ string, err error) { finals <- err }})
	if err != nil {
		t.Fatal(err)
	}
	rs := sess.(*rtSession)
	pcm := make([]byte, 64<<10)
	// enough audio to fill the loopback socket's buffers many times over,
	// so the writer is blocked in a write when Close comes
	for range 512 {
		if sess.Append(1, pcm) != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	for i := 0; i < 500 && len(rs.out) < cap(rs.out)/64; i++ {
		if sess.Append(1, pcm) != nil {
			break
		}
	}
	closed := make(chan struct{})
	go func() { sess.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close never returned: the session's writer is stuck on an upstream that stopped reading")
	}
	select {
	case <-rs.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the session's goroutine is still blocked writing to the upstream")
	}
}

// TestRealtimeQueueBoundedInBytes: audio a page sends faster than the
// upstream takes it waits in the session's queue; the queue is bounded in
// bytes, not only in frames (a frame may be megabytes), so a turn cannot
// hold its whole audio in memory: past the bound Append fails, which the
// processor turns into the loud degraded transcript.
func TestRealtimeQueueBoundedInBytes(t *testing.T) {
	sess, err := OpenAIRealtime(stalledUpstream(t))(context.Background(), "sk-rt", "m", "", RealtimeEvents{
		Final: func(int, string, error) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	rs := sess.(*rtSession)
	pcm := make([]byte, 1<<20)
	var appendErr error
	for range 256 { // 256 MiB of audio, far more than socket buffers take
		if appendErr = sess.Append(1, pcm); appendErr != nil {
			break
		}
		rs.mu.Lock()
		queued := rs.queued
		rs.mu.Unlock()
		if queued > realtimeQueueBytes {
			t.Fatalf("%d bytes queued for the upstream, bound %d", queued, realtimeQueueBytes)
		}
	}
	if appendErr == nil || !strings.Contains(appendErr.Error(), "not keeping up") {
		t.Fatalf("256 MiB appended to a stalled upstream; last error %v", appendErr)
	}
}
