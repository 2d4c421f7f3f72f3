// Command barerelay is the floor the hub's relays are measured against:
// the least process that routes the same messages, with nothing else (no
// origin, key, token or handshake checks, no limits, no logging). It
// listens on a loopback port from the OS and prints {"port":N} on stdout.
//
//   - Stitch Slop: a WebSocket on / is the page; POST /call
//     {command, args} goes to it under a fresh id and is answered with
//     the page's reply for that id. A page frame without an id (the
//     handshake) is answered with a hello.
//   - Pixelle: POST /api/sessions and /api/pair answer fixed values; on
//     /relay a hello is answered "ready" (role browser or agent as it
//     claims), pair.create with a code and "paired"; an agent's command
//     goes to the browser under a fresh relay id and its result back to
//     that agent under the agent's id.
//   - aiui: a WebSocket on /ws takes binary frames (4-byte header length,
//     JSON header, payload); data frames' {"text":"…"} contents are joined
//     per threadId as they come (not validated), and fin appends the
//     prompt to a file in the working directory as one line, one write
//     (emptied at 256 MiB, the record's largest size); every frame is
//     acked {"ok":true}. The floor of the hub's prompt record: the same
//     bytes reach a file the same way, with nothing else.
//
// It runs with the hub's default runtime shape (1 P), so the
// comparison is of the code, not of the thread count.
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lxzan/gws"
)

func main() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	r := &relay{waiting: map[int64]waiter{}}
	mux := http.NewServeMux()
	relayWS := upgrade(gws.NewUpgrader(r, &gws.ServerOption{ParallelEnabled: true}))
	mux.HandleFunc("/", relayWS)
	mux.HandleFunc("/relay", relayWS)
	rec, err := os.OpenFile("aiui.record", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mux.HandleFunc("/ws", upgrade(gws.NewUpgrader(&ingest{f: rec}, &gws.ServerOption{ReadMaxPayloadSize: 32 << 20})))
	mux.HandleFunc("POST /call", r.call)
	mux.HandleFunc("POST /api/sessions", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"s","browserToken":"b"}`)
	})
	mux.HandleFunc("POST /api/pair", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"sessionId":"s","token":"a","url":"relay"}`)
		if b := r.browser.Load(); b != nil {
			b.WriteMessage(gws.OpcodeText, []byte(`{"type":"paired"}`))
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("{\"port\":%d}\n", ln.Addr().(*net.TCPAddr).Port)
	(&http.Server{Handler: mux}).Serve(ln)
}

// upgrade serves WebSockets with up, each read on its own goroutine.
func upgrade(up *gws.Upgrader) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		c, err := up.Upgrade(w, req)
		if err != nil {
			return
		}
		go c.ReadLoop()
	}
}

// waiter is who gets the reply to a routed id: an HTTP caller's channel,
// or an agent socket and its own id.
type waiter struct {
	ch    chan []byte
	agent *gws.Conn
	id    json.RawMessage
}

type relay struct {
	gws.BuiltinEventHandler
	ids     atomic.Int64
	mu      sync.Mutex
	page    *gws.Conn // the Stitch Slop page: the last socket on /
	browser atomic.Pointer[gws.Conn]
	waiting map[int64]waiter
}

func (r *relay) call(w http.ResponseWriter, req *http.Request) {
	var in struct {
		Command string          `json:"command"`
		Args    json.RawMessage `json:"args"`
	}
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if json.Unmarshal(body, &in) != nil {
		http.Error(w, "bad", http.StatusBadRequest)
		return
	}
	id := r.ids.Add(1)
	ch := make(chan []byte, 1)
	r.mu.Lock()
	r.waiting[id] = waiter{ch: ch}
	c := r.page
	r.mu.Unlock()
	frame, _ := json.Marshal(map[string]any{"id": id, "command": in.Command, "args": in.Args})
	c.WriteMessage(gws.OpcodeText, frame)
	select {
	case reply := <-ch:
		w.Header().Set("Content-Type", "application/json")
		w.Write(reply)
	case <-time.After(60 * time.Second):
		http.Error(w, "timeout", http.StatusGatewayTimeout)
	}
}

func (r *relay) OnMessage(c *gws.Conn, m *gws.Message) {
	defer m.Close()
	var f struct {
		Type string          `json:"type"`
		Role string          `json:"role"`
		ID   json.RawMessage `json:"id"`
	}
	data := append([]byte(nil), m.Bytes()...)
	if json.Unmarshal(data, &f) != nil {
		return
	}
	switch f.Type {
	case "hello":
		if f.Role == "browser" {
			r.browser.Store(c)
		}
		c.WriteMessage(gws.OpcodeText, []byte(`{"type":"ready","role":"`+f.Role+`","paired":false}`))
		return
	case "pair.create":
		c.WriteMessage(gws.OpcodeText, []byte(`{"type":"pair.code","code":"000000000000","expires":0}`))
		return
	case "command":
		id := r.ids.Add(1)
		r.mu.Lock()
		r.waiting[id] = waiter{agent: c, id: f.ID}
		r.mu.Unlock()
		out := bytes.Replace(data, f.ID, []byte(strconv.FormatInt(id, 10)), 1)
		if b := r.browser.Load(); b != nil {
			b.WriteMessage(gws.OpcodeText, out)
		}
		return
	case "":
		if len(f.ID) == 0 { // the Stitch Slop handshake
			r.mu.Lock()
			r.page = c
			r.mu.Unlock()
			c.WriteMessage(gws.OpcodeText, []byte(`{"hello":"stitchslop-connector","protocol":1}`))
			return
		}
	}
	id, err := strconv.ParseInt(string(bytes.Trim(f.ID, `"`)), 10, 64)
	if err != nil {
		return
	}
	r.mu.Lock()
	wt, ok := r.waiting[id]
	delete(r.waiting, id)
	r.mu.Unlock()
	switch {
	case !ok:
	case wt.ch != nil:
		wt.ch <- data
	default:
		wt.agent.WriteMessage(gws.OpcodeText, bytes.Replace(data, f.ID, wt.id, 1))
	}
}

// ingest is aiui's /ws: text joined per thread, a line per prompt.
type ingest struct {
	gws.BuiltinEventHandler
	mu   sync.Mutex // the file's end
	f    *os.File
	size int64
}

// ingestMax is where the file is emptied: the hub's record holds at most
// 4 × 64 MiB, and a file growing without end would measure the kernel
// throttling dirty pages.
const ingestMax = 256 << 20

var ack = []byte(`{"ok":true}`)

// conn is a socket's threads, each its line so far, and a spare line
// buffer (a finished thread's), so a steady stream copies each byte once.
type conn struct {
	threads map[string][]byte
	spare   []byte
}

func (in *ingest) OnOpen(c *gws.Conn) { c.Session().Store("c", &conn{threads: map[string][]byte{}}) }

func (in *ingest) OnMessage(c *gws.Conn, m *gws.Message) {
	defer m.Close()
	b := m.Bytes()
	if len(b) < 4 {
		return
	}
	n := int(binary.BigEndian.Uint32(b))
	if n > len(b)-4 {
		return
	}
	var h struct {
		Kind     string `json:"kind"`
		ThreadID string `json:"threadId"`
		Fin      bool   `json:"fin"`
	}
	if json.Unmarshal(b[4:4+n], &h) != nil {
		return
	}
	if h.Kind == "data" {
		v, _ := c.Session().Load("c")
		cn := v.(*conn)
		line, ok := cn.threads[h.ThreadID]
		if !ok {
			line = append(cn.spare[:0], `{"text":"`...)
			cn.spare = nil
		}
		if p := b[4+n:]; len(p) >= len(`{"text":""}`) {
			line = append(line, p[len(`{"text":"`):len(p)-len(`"}`)]...)
		}
		if h.Fin {
			delete(cn.threads, h.ThreadID)
			line = append(line, "\"}\n"...)
			in.append(line)
			cn.spare = line
		} else {
			cn.threads[h.ThreadID] = line
		}
	}
	c.WriteMessage(gws.OpcodeText, ack)
}

func (in *ingest) append(line []byte) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.size+int64(len(line)) > ingestMax {
		in.f.Truncate(0)
		in.size = 0
	}
	k, _ := in.f.WriteAt(line, in.size)
	in.size += int64(k)
}
