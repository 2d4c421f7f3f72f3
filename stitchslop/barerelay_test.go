package stitchslop

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lxzan/gws"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// startBareRelay runs the least relay of the same protocol, the floor the
// benchmark compares the bridge with: POST /call {command, args} is sent
// to the one page socket under a fresh id and answered with the page's
// reply for that id; nothing else (no origin, key or handshake checks, no
// limits, no agents, no logging). It returns /call's URL and the page,
// connected.
func startBareRelay(b *testing.B) (string, *page) {
	b.Helper()
	r := &bareRelay{waiting: map[int64]chan []byte{}, attached: make(chan struct{})}
	up := gws.NewUpgrader(r, &gws.ServerOption{ParallelEnabled: true})
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		c, err := up.Upgrade(w, req)
		if err != nil {
			return
		}
		r.mu.Lock()
		r.conn = c
		r.mu.Unlock()
		close(r.attached)
		go c.ReadLoop()
	})
	mux.HandleFunc("POST /call", r.call)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	c, err := adaptertest.Dial("ws://"+ln.Addr().String()+"/", adaptertest.DialOptions{Origin: testOrigin})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	<-r.attached
	return "http://" + ln.Addr().String() + "/call", &page{t: b, WSClient: c}
}

type bareRelay struct {
	gws.BuiltinEventHandler
	ids      atomic.Int64
	mu       sync.Mutex
	conn     *gws.Conn
	waiting  map[int64]chan []byte
	attached chan struct{}
}

func (r *bareRelay) call(w http.ResponseWriter, req *http.Request) {
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
	r.waiting[id] = ch
	c := r.conn
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

func (r *bareRelay) OnMessage(_ *gws.Conn, m *gws.Message) {
	defer m.Close()
	var f struct {
		ID int64 `json:"id"`
	}
	data := append([]byte(nil), m.Bytes()...)
	if json.Unmarshal(data, &f) != nil {
		return
	}
	r.mu.Lock()
	ch := r.waiting[f.ID]
	delete(r.waiting, f.ID)
	r.mu.Unlock()
	if ch != nil {
		ch <- data
	}
}
