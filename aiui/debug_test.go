package aiui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/aiui/frame"
)

func TestDebugViewer(t *testing.T) {
	h, _ := start(t, nil)
	r := h.Do(adaptertest.Request{Path: "/debug"})
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(r.Body), `src="/debug/ui/app.js"`) {
		t.Fatalf("/debug: %d %s", r.Status, r.Header)
	}
	csp := r.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Fatalf("/debug CSP: %q", csp)
	}
	for file, typ := range map[string]string{"app.js": "text/javascript", "app.css": "text/css"} {
		r := h.Do(adaptertest.Request{Path: "/debug/ui/" + file})
		if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), typ) || r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("/debug/ui/%s: %d %s", file, r.Status, r.Header)
		}
	}
	for _, path := range []string{"/debug/ui/index.html", "/debug/ui/debug.go", "/debug/ui/..%2Fdebug.go"} {
		if r := h.Do(adaptertest.Request{Path: path}); r.Status != 404 {
			t.Errorf("%s: %d, want 404", path, r.Status)
		}
	}
	// the same gates as every browser route
	for _, path := range []string{"/debug", "/debug/ui/app.js", "/debug/api/traces", "/debug/api/events", "/debug/blob/0123"} {
		if r := h.Do(adaptertest.Request{Path: path, Header: http.Header{"Origin": {"https://evil.example"}}}); r.Status != 403 {
			t.Errorf("%s from a foreign origin: %d", path, r.Status)
		}
		if r := h.Do(adaptertest.Request{Path: path, Host: fmt.Sprintf("evil.example:%d", h.Port())}); r.Status != 403 {
			t.Errorf("%s with a rebinding Host: %d", path, r.Status)
		}
	}
}

// viewTrace is what the debug API says of one trace.
type viewTrace struct {
	ID     string `json:"id"`
	Thread string `json:"threadId"`
	State  string `json:"state"`
	From   int    `json:"from"`
	Blobs  []struct {
		Key  string `json:"key"`
		ID   string `json:"id"`
		Path string `json:"path"`
	} `json:"blobs"`
	Stages []struct {
		Stage string  `json:"stage"`
		MS    float64 `json:"ms"`
	} `json:"stages"`
}

type viewChanges struct {
	Version uint64      `json:"version"`
	IDs     []string    `json:"ids"`
	Traces  []viewTrace `json:"traces"`
}

func tracesSince(t *testing.T, h *adaptertest.Harness, since string) viewChanges {
	t.Helper()
	r := h.Do(adaptertest.Request{Path: "/debug/api/traces" + since})
	var v viewChanges
	if err := json.Unmarshal(r.Body, &v); r.Status != 200 || err != nil {
		t.Fatalf("traces%s: %d %s", since, r.Status, r.Body)
	}
	return v
}

func chunkFrame(t *testing.T, thread string, fin bool, c *frame.ChunkDescriptor, payload []byte) []byte {
	return mustFrame(t, frame.Envelope{V: 1, Kind: "data", ThreadID: thread, Fin: fin, Chunk: c}, payload)
}

// TestDebugBlobs: the viewer fetches an attachment only by the key the
// trace store issued for it. A path, a name or a key nobody issued is a
// 404, and so is a key whose trace fell out of the recent ones; what is
// served is typed for the viewer (raw PCM as WAV) and never as markup.
func TestDebugBlobs(t *testing.T) {
	h, s := start(t, nil)
	c := h.MustDial("/ws", adaptertest.DialOptions{})
	sendAck(t, c, mustFrame(t, frame.Envelope{V: 1, Kind: "hello", Format: "intent-v1",
		Meta: &frame.HelloMeta{Intent: json.RawMessage(`{"transcriber":"mock"}`)}}, nil))
	png := []byte("\x89PNG\r\n\x1a\n not really a png")
	pcm := []byte{1, 0, 2, 0, 3, 0, 4}
	seq := int64(0)
	for _, f := range [][]byte{
		chunkFrame(t, "b1", false, &frame.ChunkDescriptor{Kind: "events"}, []byte(`{"events":[{"at":1,"type":"shot","marker":"shot_1"}]}`)),
		chunkFrame(t, "b1", false, &frame.ChunkDescriptor{Kind: "attachment", ID: "shot_1", Mime: "image/png"}, png),
		chunkFrame(t, "b1", false, &frame.ChunkDescriptor{Kind: "attachment", ID: "shot_2", Mime: "text/html"}, []byte("<script>alert(1)</script>")),
		chunkFrame(t, "b1", false, &frame.ChunkDescriptor{Kind: "audio", ID: "seg_1", Seq: &seq, Mime: "audio/pcm;rate=16000"}, pcm),
	} {
		if r := sendAck(t, c, f); !r.OK {
			t.Fatalf("frame: %+v", r)
		}
	}
	v := tracesSince(t, h, "")
	if len(v.Traces) != 1 || len(v.Traces[0].Blobs) != 3 {
		t.Fatalf("traces: %+v", v)
	}
	keys := map[string]string{}
	paths := map[string]string{}
	for _, b := range v.Traces[0].Blobs {
		keys[b.ID], paths[b.ID] = b.Key, b.Path
	}

	r := h.Do(adaptertest.Request{Path: "/debug/blob/" + keys["shot_1"]})
	if r.Status != 200 || !bytes.Equal(r.Body, png) || r.Header.Get("Content-Type") != "image/png" ||
		r.Header.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(r.Header.Get("Content-Security-Policy"), "sandbox") {
		t.Fatalf("shot_1: %d %s %q", r.Status, r.Header, r.Body)
	}
	r = h.Do(adaptertest.Request{Path: "/debug/blob/" + keys["shot_2"]})
	if r.Status != 200 || r.Header.Get("Content-Type") != "application/octet-stream" || r.Header.Get("Content-Disposition") != "attachment" {
		t.Fatalf("a blob declared text/html: %d %s", r.Status, r.Header)
	}
	r = h.Do(adaptertest.Request{Path: "/debug/blob/" + keys["seg_1"]})
	if r.Status != 200 || r.Header.Get("Content-Type") != "audio/wav" || len(r.Body) != 44+6 ||
		string(r.Body[:4]) != "RIFF" || binary.LittleEndian.Uint32(r.Body[24:]) != 16000 || !bytes.Equal(r.Body[44:], pcm[:6]) {
		t.Fatalf("streamed PCM as WAV: %d %s % x", r.Status, r.Header, r.Body)
	}
	r = h.Do(adaptertest.Request{Path: "/debug/blob/" + keys["seg_1"], Header: http.Header{"Range": {"bytes=44-"}}})
	if r.Status != 206 || !bytes.Equal(r.Body, pcm[:6]) {
		t.Fatalf("a range of the WAV: %d % x", r.Status, r.Body)
	}

	for _, key := range []string{
		strings.Repeat("0", len(keys["shot_1"])), // a key nobody issued
		strings.ToUpper(keys["shot_1"]),
		"shot_1", "shot_1.png", v.Traces[0].ID,
		url.PathEscape(paths["shot_1"]),
		"..%2F..%2F..%2F..%2Fetc%2Fpasswd",
		"%2Fetc%2Fpasswd",
		"..%2Fapi%2Finfo",
		v.Traces[0].ID + "/shot_1.png",
		"../../../../etc/passwd", // cleaned by the mux, then not a route
	} {
		if r := h.Do(adaptertest.Request{Path: "/debug/blob/" + key}); r.Status != 404 {
			t.Errorf("/debug/blob/%s: %d, want 404", key, r.Status)
		}
	}

	os.Remove(paths["shot_2"])
	if r := h.Do(adaptertest.Request{Path: "/debug/blob/" + keys["shot_2"]}); r.Status != 404 {
		t.Errorf("a removed blob: %d", r.Status)
	}
	for range maxTraces {
		s.cur.Load().traces.open("later", "text-concat", nil)
	}
	if r := h.Do(adaptertest.Request{Path: "/debug/blob/" + keys["shot_1"]}); r.Status != 404 {
		t.Errorf("the blob of a trace no longer kept: %d", r.Status)
	}
	if _, err := os.Stat(paths["shot_1"]); err != nil {
		t.Errorf("the blob store is the trace's, the viewer only stops serving it: %v", err)
	}
}

// TestDebugTracesSince: a poller asks for what changed after the version
// it has, and gets only that.
func TestDebugTracesSince(t *testing.T) {
	h, _ := start(t, nil)
	c := h.MustDial("/ws", adaptertest.DialOptions{})
	sendAck(t, c, helloFrame(t, "text-concat"))
	sendAck(t, c, dataFrame(t, "first", true, `{"text":"one"}`))
	v1 := tracesSince(t, h, "")
	if len(v1.Traces) != 1 || v1.Traces[0].State != stateDelivered {
		t.Fatalf("after one prompt: %+v", v1)
	}
	if v := tracesSince(t, h, fmt.Sprintf("?since=%d", v1.Version)); len(v.Traces) != 0 || v.Version != v1.Version || len(v.IDs) != 1 {
		t.Fatalf("nothing changed: %+v", v)
	}
	sendAck(t, c, dataFrame(t, "second", false, `{"text":"two"}`))
	v2 := tracesSince(t, h, fmt.Sprintf("?since=%d", v1.Version))
	if len(v2.Traces) != 1 || v2.Traces[0].Thread != "second" || v2.Traces[0].State != stateOpen || len(v2.IDs) != 2 {
		t.Fatalf("since v%d: %+v", v1.Version, v2)
	}
	if r := h.Do(adaptertest.Request{Path: "/debug/api/traces?since=x"}); r.Status != 400 {
		t.Fatalf("since=x: %d", r.Status)
	}
}

// sse reads server-sent events.
type sse struct {
	t    *testing.T
	resp *http.Response
	br   *bufio.Reader
}

func openSSE(t *testing.T, ctx context.Context, h *adaptertest.Harness) *sse {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", h.URL("/debug/api/events"), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		resp.Body.Close()
		t.Fatalf("/debug/api/events: %d %s", resp.StatusCode, resp.Header)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return &sse{t: t, resp: resp, br: bufio.NewReader(resp.Body)}
}

// next returns the next event named name (others are skipped).
func (s *sse) next(name string, v any) {
	s.t.Helper()
	var event, data string
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			s.t.Fatalf("reading the event stream: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			event = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		case line == "" && event != "":
			if event == name {
				if err := json.Unmarshal([]byte(data), v); err != nil {
					s.t.Fatalf("%s event: %v: %s", name, err, data)
				}
				return
			}
			event, data = "", ""
		}
	}
}

// TestDebugEvents: the live feed sends everything first, then each
// changed trace with only the stages the viewer has not had, as the turn
// runs; it holds a bounded number of viewers.
func TestDebugEvents(t *testing.T) {
	h, _ := start(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := h.MustDial("/ws", adaptertest.DialOptions{})
	sendAck(t, c, helloFrame(t, "intent-v1"))
	sendAck(t, c, chunkFrame(t, "turn", false, &frame.ChunkDescriptor{Kind: "events"}, []byte(`{"events":[{"at":1,"type":"talk-start","segment":1}]}`)))

	feed := openSSE(t, ctx, h)
	var first struct {
		viewChanges
		Info map[string]any `json:"info"`
	}
	feed.next("traces", &first)
	if len(first.Traces) != 1 || first.Traces[0].From != 0 || first.Traces[0].State != stateOpen || first.Info["generation"] != float64(0) {
		t.Fatalf("first event: %+v", first)
	}
	had := len(first.Traces[0].Stages)
	if had < 4 { // hello, client context, prompt preamble, speculative compose
		t.Fatalf("first event's stages: %+v", first.Traces[0].Stages)
	}

	sendAck(t, c, chunkFrame(t, "turn", true, &frame.ChunkDescriptor{Kind: "events"},
		[]byte(`{"events":[{"at":2,"type":"transcript-final","segment":1,"text":"hi"},{"at":3,"type":"thread-close","reason":"send"}]}`)))
	var v viewChanges
	for {
		feed.next("traces", &v)
		if len(v.Traces) != 1 || v.Traces[0].From != had {
			t.Fatalf("a delta after %d stages: %+v", had, v)
		}
		had += len(v.Traces[0].Stages)
		if v.Traces[0].State == stateDelivered && v.Traces[0].Stages[len(v.Traces[0].Stages)-1].Stage == "closed" {
			break
		}
	}

	var feeds []*sse
	for len(feeds) < maxViewers-1 {
		feeds = append(feeds, openSSE(t, ctx, h))
	}
	if r := h.Do(adaptertest.Request{Path: "/debug/api/events"}); r.Status != 503 {
		t.Fatalf("viewer %d: %d", maxViewers+1, r.Status)
	}
}

// TestTraceStatesOverTheWire: what a thread ended in, as the viewer shows
// it, for the ends a connection and its processors report.
func TestTraceStatesOverTheWire(t *testing.T) {
	h, _ := start(t, nil)
	tc := h.MustDial("/ws", adaptertest.DialOptions{})
	sendAck(t, tc, helloFrame(t, "text-concat"))
	sendAck(t, tc, dataFrame(t, "nothing", true, ""))
	ic := h.MustDial("/ws", adaptertest.DialOptions{})
	sendAck(t, ic, helloFrame(t, "intent-v1"))
	sendAck(t, ic, chunkFrame(t, "cancelled", true, &frame.ChunkDescriptor{Kind: "events"},
		[]byte(`{"events":[{"at":1,"type":"talk-start","segment":1},{"at":2,"type":"thread-close","reason":"cancel"}]}`)))
	if r := sendAck(t, ic, chunkFrame(t, "broken", false, &frame.ChunkDescriptor{Kind: "events"}, []byte(`{"events":`))); r.OK {
		t.Fatal("a cut events chunk was accepted")
	}
	ic.Close()
	want := map[string]string{"nothing": stateEmpty, "cancelled": stateCancelled, "broken": stateFailed}
	adaptertest.WaitFor(t, "the threads' end states", func() bool {
		for _, tr := range tracesSince(t, h, "").Traces {
			if want[tr.Thread] != tr.State {
				return false
			}
		}
		return true
	})
}
