package bench

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
)

// ackServer is a WebSocket server that acks every frame with
// {"ok":true} and allocates nothing per frame, so a test can count what
// the client allocates. Each frame's unmasked payload goes to each (nil:
// dropped) on the connection's goroutine.
func ackServer(t *testing.T, each func([]byte)) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serveAcks(c, each)
		}
	}()
	return &Server{Kind: "test", Ports: map[string][]int{"": {ln.Addr().(*net.TCPAddr).Port}}}
}

func serveAcks(c net.Conn, each func([]byte)) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + wsGUID))
	io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "+
		base64.StdEncoding.EncodeToString(sum[:])+"\r\n\r\n")
	ack := append([]byte{0x81, byte(len(`{"ok":true}`))}, `{"ok":true}`...)
	buf := make([]byte, 1<<20)
	for {
		var h [14]byte
		if _, err := io.ReadFull(br, h[:2]); err != nil || h[1]&0x80 == 0 {
			return // closed, or an unmasked client frame
		}
		n, ext := int(h[1]&0x7F), 0
		switch n {
		case 126:
			ext = 2
		case 127:
			ext = 8
		}
		if _, err := io.ReadFull(br, h[2:2+ext+4]); err != nil {
			return
		}
		switch ext {
		case 2:
			n = int(binary.BigEndian.Uint16(h[2:]))
		case 8:
			n = int(binary.BigEndian.Uint64(h[2:]))
		}
		if n > len(buf) {
			return
		}
		p := buf[:n]
		if _, err := io.ReadFull(br, p); err != nil {
			return
		}
		key := h[2+ext : 2+ext+4]
		for i := range p {
			p[i] ^= key[i&3]
		}
		if each != nil {
			each(p)
		}
		if _, err := c.Write(ack); err != nil {
			return
		}
	}
}

// TestAiuiIngestFrames: the ingest load's client sends, after the hello,
// each prompt as four data frames of its own thread, fin on the last, the
// 64 KiB payload intact, as the spec frames them.
func TestAiuiIngestFrames(t *testing.T) {
	type got struct {
		hdr     map[string]any
		payload []byte
	}
	frames := make(chan got, 16)
	srv := ackServer(t, func(p []byte) {
		n := binary.BigEndian.Uint32(p)
		var hdr map[string]any
		if err := json.Unmarshal(p[4:4+n], &hdr); err != nil {
			t.Errorf("header %q: %v", p[4:4+n], err)
		}
		frames <- got{hdr, append([]byte(nil), p[4+n:]...)}
	})
	cl, err := aiuiIngest().Connect(context.Background(), srv, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if h := <-frames; h.hdr["kind"] != "hello" || h.hdr["format"] != "text-concat" || len(h.payload) != 0 {
		t.Fatalf("first frame: %v %q", h.hdr, h.payload)
	}
	want := aiuiPrompt(aiuiFrameBytes)
	for thread := 1; thread <= 3; thread++ {
		n, err := cl.Ops[0]()
		if err != nil {
			t.Fatal(err)
		}
		if n != aiuiFramesPerThread*aiuiFrameBytes {
			t.Errorf("op counted %d bytes, want %d", n, aiuiFramesPerThread*aiuiFrameBytes)
		}
		for k := range aiuiFramesPerThread {
			f := <-frames
			fin := k == aiuiFramesPerThread-1
			if f.hdr["kind"] != "data" || f.hdr["v"] != 1.0 || f.hdr["threadId"] != aiuiThreadID(0, thread) || (f.hdr["fin"] == true) != fin {
				t.Errorf("thread %d frame %d: header %v", thread, k, f.hdr)
			}
			if string(f.payload) != string(want) {
				t.Errorf("thread %d frame %d: payload differs (%d bytes, want %d)", thread, k, len(f.payload), len(want))
			}
		}
	}
}

// TestAiuiIngestClientCost: a prompt costs the harness no copy of its
// frames (it shares the 2 cores with the server it measures): less than
// 4 KiB allocated per 256 KiB prompt, acks read included.
func TestAiuiIngestClientCost(t *testing.T) {
	srv := ackServer(t, nil)
	cl, err := aiuiIngest().Connect(context.Background(), srv, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	op := func() {
		if _, err := cl.Ops[0](); err != nil {
			t.Fatal(err)
		}
	}
	op()
	const ops = 50
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range ops {
		op()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / ops; per >= 4<<10 {
		t.Errorf("the harness allocated %d bytes per prompt, want < 4096", per)
	}
}
