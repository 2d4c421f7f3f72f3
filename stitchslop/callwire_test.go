package stitchslop

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/internal/race"
)

// The bytes each codec writes are encoding/json's, pinned here as they
// were before the hand-written codecs: a change to either shows.
func TestCallFrameBytes(t *testing.T) {
	for _, c := range []struct {
		id      int64
		command string
		args    string
		want    string
	}{
		{7, "scene.describe", `{"limit":5}`, `{"id":7,"command":"scene.describe","args":{"limit":5}}`},
		{1, "x", `{}`, `{"id":1,"command":"x","args":{}}`},
		{1 << 62, "a<b>&c", ` { "s" : "<p>\u2028 & \"q\"" , "n" : [ 1 , 2.5e3 , null ] } `,
			`{"id":4611686018427387904,"command":"a\u003cb\u003e\u0026c","args":{"s":"\u003cp\u003e\u2028 \u0026 \"q\"","n":[1,2.5e3,null]}}`},
		{2, "é\u2029\x01\"\\", `{"k":"l\u2028ine"}`, `{"id":2,"command":"é\u2029\u0001\"\\","args":{"k":"l\u2028ine"}}`},
		{3, "bad\xffutf8", `{"a":"\u00e9"}`, `{"id":3,"command":"bad\ufffdutf8","args":{"a":"\u00e9"}}`},
	} {
		got := string(appendCallFrame(nil, c.id, c.command, []byte(c.args)))
		if got != c.want {
			t.Errorf("frame for %q %s:\n got %s\nwant %s", c.command, c.args, got, c.want)
		}
		std := marshalCallFrame(t, c.id, c.command, []byte(c.args))
		if got != string(std) {
			t.Errorf("frame for %q %s:\n got %s\n encoding/json %s", c.command, c.args, got, std)
		}
	}
}

// marshalCallFrame is how Call wrote the frame before: json.Marshal.
func marshalCallFrame(t *testing.T, id int64, command string, args []byte) []byte {
	b, err := json.Marshal(struct {
		ID      int64           `json:"id"`
		Command string          `json:"command"`
		Args    json.RawMessage `json:"args"`
	}{id, command, args})
	if err != nil {
		t.Fatalf("encoding/json refuses args %q: %v", args, err)
	}
	return b
}

func TestDecodeCallBody(t *testing.T) {
	for _, c := range []struct {
		body, command, args string
		fast                bool // takes the hand-written path
		err                 bool
	}{
		{`{"command":"scene.describe","args":{"limit":5}}`, "scene.describe", `{"limit":5}`, true, false},
		{` { "args" : { "a" : [1, 2] } , "command" : "x" } `, "x", `{ "a" : [1, 2] }`, true, false},
		{`{"command":"x"}`, "x", "", true, false},
		{`{"command":"x","args":null}`, "x", "null", true, false},
		{`{"command":"x","args":[1]}`, "x", "[1]", true, false}, // Call refuses it
		{`{}`, "", "", true, false},
		{`{"command":"\u0078"}`, "x", "", false, false},
		{`{"Command":"x"}`, "x", "", false, false},
		{`{"command":"x","command":"y"}`, "y", "", false, false},
		{`{"command":"x","other":1}`, "x", "", false, false},
		{`{"command":null}`, "", "", false, false},
		{"{\"command\":\"\xff\"}", "\ufffd", "", false, false},
		{``, "", "", false, false},
		{`null`, "", "", false, false},
		{`{"command":5}`, "", "", false, true},
		{`[]`, "", "", false, true},
		{`{"command":"x"`, "", "", false, true},
		{`{"command":"x"} {}`, "", "", false, true},
	} {
		_, fast := fastCallBody([]byte(c.body))
		if fast != c.fast {
			t.Errorf("%s: fast path %v, want %v", c.body, fast, c.fast)
		}
		cb, err := decodeCallBody([]byte(c.body))
		if (err != nil) != c.err {
			t.Errorf("%s: error %v, want one: %v", c.body, err, c.err)
			continue
		}
		if err == nil && (cb.Command != c.command || string(cb.Args) != c.args) {
			t.Errorf("%s: got %q %q, want %q %q", c.body, cb.Command, cb.Args, c.command, c.args)
		}
	}
}

// FuzzCallBody: the POST /call body decodes as encoding/json decodes it,
// accepting and refusing the same bodies, with the same command and the
// same args bytes.
func FuzzCallBody(f *testing.F) {
	for _, s := range []string{
		`{"command":"scene.describe","args":{"limit":5}}`, `{"command":"x","args":null}`, `{"command":"x"}`,
		`{"command":"\u0078","args":{}}`, `{"COMMAND":"x"}`, `{"command":"x","command":"y"}`, `{"args":1,"args":2}`,
		`{"command":5}`, `null`, `[]`, `{"command":"x"} x`, "{\"command\":\"\xff\"}", ` {"args" : [ {} ] } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want callBody
		wantErr := len(b) > 0 && json.Unmarshal(b, &want) != nil
		got, err := decodeCallBody(b)
		if (err != nil) != wantErr {
			t.Fatalf("%q: error %v; encoding/json refuses it: %v", b, err, wantErr)
		}
		if err == nil && (got.Command != want.Command || !bytes.Equal(got.Args, want.Args)) {
			t.Fatalf("%q: got %q %q, encoding/json %q %q", b, got.Command, got.Args, want.Command, want.Args)
		}
	})
}

// FuzzCallFrame: the command frame is json.Marshal's, byte for byte, for
// every command and every args Call sends.
func FuzzCallFrame(f *testing.F) {
	f.Add(int64(1), "scene.describe", []byte(`{"limit":5}`))
	f.Add(int64(-3), "<&>\u2028\x00\xff", []byte(" {\"a\" :\t\"<\u2029>\\u003c\" }\n"))
	f.Add(int64(0), "", []byte(`{"a":{"b":[1,{"c":"\\"}"}]}}`))
	f.Fuzz(func(t *testing.T, id int64, command string, args []byte) {
		if !isJSONObject(args) {
			return
		}
		got := appendCallFrame([]byte("prefix"), id, command, args)
		want := marshalCallFrame(t, id, command, args)
		if !bytes.Equal(got[len("prefix"):], want) {
			t.Fatalf("frame:\n got %s\nwant %s", got[len("prefix"):], want)
		}
	})
}

// FuzzIsJSONObject: isJSONObject is the map decoding it replaced.
func FuzzIsJSONObject(f *testing.F) {
	for _, s := range []string{`{}`, ` {"a":1} `, `null`, `[]`, `{`, `{"a":1}x`, "{\"\xff\":1}", `"x"`, ``, ` `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m map[string]json.RawMessage
		want := len(b) > 0 && json.Unmarshal(b, &m) == nil && m != nil
		if got := isJSONObject(b); got != want {
			t.Fatalf("isJSONObject(%q) = %v, the map decoding says %v", b, got, want)
		}
	})
}

// FuzzReplyID: where replyID finds an id, pageFrame's decoding finds the
// same one (the map of the frame's members, "id" an int64).
func FuzzReplyID(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"ok":true}`, `{"ok":true,"id":-0}`, `{"id":1,"id":2}`, `{"id":"1"}`, `{"id":1.0}`, `{"id":1e2}`,
		`{"id":null}`, `{"\u0069d":3,"id":4}`, `{"id":99999999999999999999}`, `{"id":-9223372036854775808}`, `[1]`,
		`{"id":1} x`, `{"tools":[],"id":5}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		id, ok := replyID(b)
		if !ok {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil || m == nil {
			t.Fatalf("replyID(%q) = %d, but the frame does not decode: %v", b, id, err)
		}
		var want int64
		if err := json.Unmarshal(m["id"], &want); err != nil || want != id {
			t.Fatalf("replyID(%q) = %d, encoding/json %d (%v)", b, id, want, err)
		}
	})
}

// echoPage answers each command frame at once, on the caller's goroutine,
// as a page's reply frame reaches pageFrame: a call with no socket and no
// hand-off, so what is counted is the bridge's own work.
type echoPage struct {
	r      *run
	p      *pageConn
	reply  []byte
	writes int
}

func (e *echoPage) WriteText(b []byte) error {
	e.writes++
	id, ok := replyID(b)
	if !ok {
		panic("a command frame without an id: " + string(b))
	}
	e.reply = append(append(e.reply[:0], `{"id":`...), itoa(int(id))...)
	e.reply = append(e.reply, `,"ok":true,"say":"ok","objects":3}`...)
	e.r.pageFrame(e.p, e.reply)
	return nil
}

// nopWriter is a ResponseWriter that keeps the answer's last bytes and
// reuses its header map.
type nopWriter struct {
	h      http.Header
	status int
	body   []byte
}

func (w *nopWriter) Header() http.Header { return w.h }
func (w *nopWriter) WriteHeader(s int)   { w.status = s }
func (w *nopWriter) Write(b []byte) (int, error) {
	w.body = append(w.body[:0], b...)
	return len(b), nil
}

// resetBody is a request body read again from its start on every call.
type resetBody struct{ *strings.Reader }

func (resetBody) Close() error { return nil }

func newEchoRun(t testing.TB) (*run, *echoPage) {
	s, err := New(&Config{Origin: testOrigin})
	if err != nil {
		t.Fatal(err)
	}
	r := newRun(s, &adapters.Env{Log: slog.New(slog.DiscardHandler)}, runPlace{dir: t.TempDir()})
	p := newPageConn(r, nil, testOrigin)
	e := &echoPage{r: r, p: p}
	p.out = e
	r.mu.Lock()
	r.page = p
	r.mu.Unlock()
	return r, e
}

// A shell's POST /call costs the bridge a bounded number of allocations:
// the body, the frame, the pending call and its channel, the timer, the
// reply's copy, the agent's context. (Decoding the body, checking args,
// encoding the frame and decoding the reply with encoding/json cost 40
// more.)
func TestCallAllocations(t *testing.T) {
	r, e := newEchoRun(t)
	const body = `{"command":"scene.describe","args":{"limit":5}}`
	rd := strings.NewReader(body)
	req, _ := http.NewRequest("POST", "http://127.0.0.1/call", resetBody{rd})
	w := &nopWriter{h: http.Header{}}
	call := func() {
		rd.Reset(body)
		clear(w.h)
		r.handleCall(w, req)
	}
	call()
	if w.status != http.StatusOK || string(w.body) != `{"id":1,"ok":true,"say":"ok","objects":3}`+"\n" {
		t.Fatalf("answer %d %s", w.status, w.body)
	}
	if e.writes != 1 {
		t.Fatalf("%d frames to the page for one call", e.writes)
	}
	const max = 10
	n := testing.AllocsPerRun(200, call)
	t.Logf("%.1f allocations per call", n)
	if !race.Enabled && n > max {
		t.Errorf("a call allocates %.0f times, want at most %d", n, max)
	}
	if e.writes != 202 {
		t.Errorf("%d frames to the page for 202 calls", e.writes)
	}
	if w.h.Get("Content-Type") != "application/json" || w.h.Get("Cache-Control") != "no-store" {
		t.Errorf("answer headers %v", w.h)
	}
}

func TestAgentHeaderKey(t *testing.T) {
	if k := http.CanonicalHeaderKey(AgentHeader); k != agentHeaderKey {
		t.Fatalf("agentHeaderKey %q, canonical %q", agentHeaderKey, k)
	}
}

// A page's reply reaches its call with one allocation: its copy.
func TestReplyAllocations(t *testing.T) {
	r, _ := newEchoRun(t)
	p := r.page
	frame := []byte(`{"id":1,"ok":true,"say":"ok","objects":3}`)
	n := testing.AllocsPerRun(200, func() {
		id, pc, ok := p.register()
		if !ok || id < 1 {
			t.Fatal("no call registered")
		}
		frame = append(append(frame[:0], `{"id":`...), itoa(int(id))...)
		frame = append(frame, `,"ok":true,"say":"ok","objects":3}`...)
		r.pageFrame(p, frame)
		if <-pc.done; !bytes.Equal(pc.res.data, frame) || cap(pc.res.data) < len(frame)+1 {
			t.Fatalf("reply %s (cap %d)", pc.res.data, cap(pc.res.data))
		}
	})
	t.Logf("%.1f allocations per call", n)
	// register: the call and its channel (and, now and then, the map's
	// growth); pageFrame: the copy.
	if !race.Enabled && n > 3 {
		t.Errorf("registering and answering a call allocates %.1f times, want at most 3", n)
	}
}
