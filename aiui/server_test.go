package aiui

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/aiui/tools"
)

func TestHealth(t *testing.T) {
	h, _ := start(t, nil)
	r := h.Do(adaptertest.Request{Path: "/health", Header: http.Header{"Origin": {"https://evil.example"}}})
	if r.Status != 200 || r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("health: %d %v", r.Status, r.Header)
	}
	var body struct {
		OK         bool          `json:"ok"`
		PID        int           `json:"pid"`
		Generation int           `json:"generation"`
		PageTools  tools.Summary `json:"pageTools"`
	}
	json.Unmarshal(r.Body, &body)
	if !body.OK || body.PID != os.Getpid() || body.Generation != 0 {
		t.Fatalf("health body: %s", r.Body)
	}
}

func TestHostCheck(t *testing.T) {
	h, _ := start(t, nil)
	for _, path := range []string{"/health", "/prompt", "/control/info", "/ws"} {
		if r := h.Do(adaptertest.Request{Path: path, Host: "evil.example:" + fmt.Sprint(h.Port())}); r.Status != 403 {
			t.Errorf("%s with a rebinding Host: %d, want 403", path, r.Status)
		}
	}
	c, _ := h.Dial("/ws", adaptertest.DialOptions{Host: "evil.example"})
	if c.Status() != 403 {
		t.Fatalf("/ws upgrade with a rebinding Host: %d, want 403", c.Status())
	}
}

func TestOriginAllowList(t *testing.T) {
	h, _ := start(t, func(c *Config, _ *Server) { c.Origins = []string{"https://app.example"} })
	tests := []struct {
		origin string
		ok     bool
	}{
		{"", true},
		{"http://localhost:5173", true},
		{"http://127.0.0.1:3000", true},
		{"https://app.example", true},
		{"https://evil.example", false},
		{"null", false},
		{"http://localhost.evil.example", false},
	}
	for _, path := range []string{"/ws", "/tools"} {
		for _, tt := range tests {
			c, err := h.Dial(path, adaptertest.DialOptions{Origin: tt.origin})
			if tt.ok && err != nil {
				t.Errorf("%s origin %q refused: %v", path, tt.origin, err)
			}
			if !tt.ok && c.Status() != 403 {
				t.Errorf("%s origin %q: status %d, want 403", path, tt.origin, c.Status())
			}
			if err == nil {
				c.Close()
			}
		}
	}
	for _, tt := range tests {
		r := h.Do(adaptertest.Request{Method: "POST", Path: "/prompt", Body: []byte(`{"text":"x"}`), Header: http.Header{"Origin": {tt.origin}}})
		if tt.origin == "" {
			r = h.Do(adaptertest.Request{Method: "POST", Path: "/prompt", Body: []byte(`{"text":"x"}`)})
		}
		if (r.Status == 200) != tt.ok {
			t.Errorf("/prompt origin %q: %d", tt.origin, r.Status)
		}
		if tt.ok && tt.origin != "" && r.Header.Get("Access-Control-Allow-Origin") != tt.origin {
			t.Errorf("/prompt origin %q not echoed", tt.origin)
		}
		d := h.Do(adaptertest.Request{Path: "/debug/api/info", Header: http.Header{"Origin": {tt.origin}}})
		if tt.origin != "" && (d.Status == 200) != tt.ok {
			t.Errorf("/debug origin %q: %d", tt.origin, d.Status)
		}
	}
}

func TestWSTextConcatEndToEnd(t *testing.T) {
	h, _ := start(t, nil)
	c := h.MustDial("/ws", adaptertest.DialOptions{Origin: "http://localhost:5173"})
	if r := sendAck(t, c, mustFrame(t, frame.Envelope{V: 1, Kind: "hello", Format: "text-concat",
		Meta: &frame.HelloMeta{Tab: &frame.TabInfo{Title: "morpho", URL: "http://localhost:5173/"}}}, nil)); !r.OK {
		t.Fatalf("hello: %+v", r)
	}
	steps := []struct {
		frame []byte
		want  frame.Response
	}{
		{dataFrame(t, "a", false, `{"text":"Summarize "}`), frame.Response{OK: true, ThreadID: "a"}},
		{dataFrame(t, "b", true, ``), frame.Response{OK: true, ThreadID: "b", Closed: true}},
		{dataFrame(t, "a", true, `{"text":"this repo."}`), frame.Response{OK: true, ThreadID: "a", Closed: true}},
		{dataFrame(t, "a", false, `{"text":"more"}`), frame.Response{ThreadID: "a", Error: `thread "a" is closed`}},
		{dataFrame(t, "", false, ``), frame.Response{Error: "data frame missing a usable threadId"}},
	}
	for i, s := range steps {
		if r := sendAck(t, c, s.frame); r != s.want {
			t.Fatalf("step %d: %+v, want %+v", i, r, s.want)
		}
	}
	recs := records(t, h)
	if len(recs) != 1 {
		t.Fatalf("record has %d prompts, want 1 (an empty fin sends nothing)", len(recs))
	}
	want := "[context]\nBrowser tab: \"morpho\" (http://localhost:5173/)\n[/context]\n\nSummarize this repo."
	if recs[0].Text != want || recs[0].Meta["kind"] != "prompt" || recs[0].Meta["tab_title"] != "morpho" {
		t.Fatalf("record = %+v", recs[0])
	}
	if m := adaptertest.FileMode(t, filepath.Join(StateDir(h.Dirs), "prompts.jsonl")); m != 0o600 {
		t.Fatalf("record mode %v", m)
	}
}

// TestWSTextConcatLongPrompt: a prompt longer than what a thread keeps
// in memory (the rest waits for fin in an unnamed spill file) is recorded
// whole and in order, escapes and all, and leaves no file behind; a face
// attached meanwhile reads it whole from the record.
func TestWSTextConcatLongPrompt(t *testing.T) {
	h, srv := start(t, nil)
	face := control(t, h)
	face.Face = "long"
	got := make(chan FaceEvent, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go face.Events(ctx, "", func(ev FaceEvent) error { got <- ev; return nil })
	adaptertest.WaitFor(t, "the face to attach", func() bool { return srv.cur.Load().outbox.FaceCount() == 1 })
	c := h.MustDial("/ws", adaptertest.DialOptions{})
	sendAck(t, c, helloFrame(t, "text-concat"))
	var want strings.Builder
	for i := range 5 {
		chunk := strings.Repeat(fmt.Sprintf("part %d: \"quoted\" é\n", i), 40<<10)
		want.WriteString(chunk)
		payload, _ := json.Marshal(map[string]string{"text": chunk})
		if r := sendAck(t, c, dataFrame(t, "long", i == 4, string(payload))); !r.OK {
			t.Fatalf("frame %d: %+v", i, r)
		}
	}
	recs := records(t, h)
	if len(recs) != 1 || recs[0].Text != want.String() {
		t.Fatalf("recorded %d prompts, the first %d bytes long; want one of %d", len(recs), len(recs[0].Text), want.Len())
	}
	select {
	case ev := <-got:
		if ev.Prompt == nil || ev.Prompt.Text != want.String() {
			t.Fatalf("the face read %+v", ev.Prompt != nil)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the face got nothing")
	}
	entries, _ := os.ReadDir(StateDir(h.Dirs))
	for _, e := range entries {
		if strings.Contains(e.Name(), "spill") {
			t.Fatalf("a spill file is left: %s", e.Name())
		}
	}
}

// TestWSAcksInOrder pipelines many frames over two threads and checks one
// ack per frame in arrival order; the same thread id on a second
// connection is an independent thread.
func TestWSAcksInOrder(t *testing.T) {
	h, _ := start(t, nil)
	c1 := h.MustDial("/ws", adaptertest.DialOptions{})
	c2 := h.MustDial("/ws", adaptertest.DialOptions{})
	sendAck(t, c1, helloFrame(t, "text-concat"))
	sendAck(t, c2, helloFrame(t, "text-concat"))
	const n = 200
	for i := range n {
		c1.SendBinary(dataFrame(t, fmt.Sprintf("t%d", i%2), false, fmt.Sprintf(`{"text":"%d "}`, i)))
	}
	for i := range n {
		if r := ack(t, c1); !r.OK || r.ThreadID != fmt.Sprintf("t%d", i%2) {
			t.Fatalf("ack %d = %+v", i, r)
		}
	}
	if r := sendAck(t, c1, dataFrame(t, "t0", true, "")); !r.Closed {
		t.Fatalf("fin: %+v", r)
	}
	if r := sendAck(t, c2, dataFrame(t, "t0", true, `{"text":"independent"}`)); !r.OK || !r.Closed {
		t.Fatalf("same id on another connection: %+v", r)
	}
	recs := records(t, h)
	if len(recs) != 2 || !strings.HasPrefix(recs[0].Text, "0 2 4 ") || recs[1].Text != "independent" {
		t.Fatalf("records = %+v", recs)
	}
}

func TestWSFatalErrorsClose(t *testing.T) {
	h, _ := start(t, nil)
	nullHeader := []byte{0, 0, 0, 4, 'n', 'u', 'l', 'l'}
	tests := []struct {
		name string
		send func(c *adaptertest.WSClient) error
		want string
		code uint16
	}{
		{"text frame", func(c *adaptertest.WSClient) error { return c.SendText("hello") }, "non-binary frame", 1003},
		{"null header first", func(c *adaptertest.WSClient) error { return c.SendBinary(nullHeader) }, "malformed first frame", 1002},
		{"unknown format", func(c *adaptertest.WSClient) error { return c.SendBinary(helloFrame(t, "mp3")) }, `unknown format "mp3" (known formats: intent-v1, text-concat)`, 1002},
		{"data before hello", func(c *adaptertest.WSClient) error { return c.SendBinary(dataFrame(t, "x", false, "")) }, "first frame must be a hello", 1002},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := h.MustDial("/ws", adaptertest.DialOptions{})
			if err := tt.send(c); err != nil {
				t.Fatal(err)
			}
			r := ack(t, c)
			if r.OK || !r.Fatal || !strings.Contains(r.Error, tt.want) {
				t.Fatalf("reply %+v, want fatal with %q", r, tt.want)
			}
			select {
			case <-c.Closed():
			case <-time.After(5 * time.Second):
				t.Fatal("socket not closed after a fatal reply")
			}
			if code, _ := c.CloseCode(); code != tt.code {
				t.Fatalf("close code %d, want %d", code, tt.code)
			}
		})
	}
}

// TestWSHostileFrames: hostile frames after hello never wedge or crash
// the connection, and an oversized message closes only its own socket.
func TestWSHostileFrames(t *testing.T) {
	h, _ := start(t, func(c *Config, _ *Server) { c.MaxFrameBytes = 64 << 10 })
	c := h.MustDial("/ws", adaptertest.DialOptions{})
	sendAck(t, c, helloFrame(t, "text-concat"))
	huge := make([]byte, 4)
	binary.BigEndian.PutUint32(huge, 0xFFFFFFFF)
	hostile := [][]byte{
		{0, 0, 0, 4, 'n', 'u', 'l', 'l'},
		huge,
		{0, 0},
		{0, 0, 0, 3, 0xff, 0xfe, 0xfd},
		dataFrame(t, "t", false, "{not json"),
	}
	for i, f := range hostile {
		if r := sendAck(t, c, f); r.OK || r.Fatal {
			t.Fatalf("hostile frame %d: %+v, want non-fatal error", i, r)
		}
	}
	if r := sendAck(t, c, dataFrame(t, "t", true, `{"text":"still works"}`)); !r.OK || !r.Closed {
		t.Fatalf("after hostile frames: %+v", r)
	}
	c.SendBinary(make([]byte, 128<<10))
	select {
	case <-c.Closed():
	case <-time.After(5 * time.Second):
		t.Fatal("oversized message did not close the socket")
	}
	if code, _ := c.CloseCode(); code != 1009 {
		t.Fatalf("oversized message close code %d, want 1009", code)
	}
	c2 := h.MustDial("/ws", adaptertest.DialOptions{})
	if r := sendAck(t, c2, helloFrame(t, "text-concat")); !r.OK {
		t.Fatal("the adapter stopped serving after a hostile client")
	}
}

func TestPromptEndpoint(t *testing.T) {
	h, _ := start(t, func(c *Config, _ *Server) { c.MaxMessageBytes = 4 << 10 })
	tests := []struct {
		method, body string
		status       int
	}{
		{"POST", `{"text":"hello agent","meta":{"tab":{"url":"http://localhost:5173/","title":"App"},"source":{"root":"/repo"}}}`, 200},
		{"POST", `{"text":"  "}`, 400},
		{"POST", `{bad`, 400},
		{"POST", `{"text":"` + strings.Repeat("x", 5<<10) + `"}`, 413},
		{"GET", ``, 405},
	}
	for _, tt := range tests {
		if r := h.Do(adaptertest.Request{Method: tt.method, Path: "/prompt", Body: []byte(tt.body)}); r.Status != tt.status {
			t.Errorf("%s %.30s: %d, want %d (%s)", tt.method, tt.body, r.Status, tt.status, r.Body)
		}
	}
	// The context frames the prompt as a /ws hello's does.
	recs := records(t, h)
	want := "[context]\nBrowser tab: \"App\" (http://localhost:5173/)\nSource root: /repo\n[/context]\n\nhello agent"
	if len(recs) != 1 || recs[0].Text != want || recs[0].Root != "/repo" ||
		recs[0].Meta["tab_url"] != "http://localhost:5173/" || recs[0].Meta["source_root"] != "/repo" || recs[0].Meta["source"] != "http" {
		t.Fatalf("records = %+v", recs)
	}
}

// page is a /tools client that answers calls with a fixed function.
func toolsPage(t *testing.T, h *adaptertest.Harness, register string, answer func(call map[string]any) string) *adaptertest.WSClient {
	t.Helper()
	c := h.MustDial("/tools", adaptertest.DialOptions{Origin: "http://localhost:5173"})
	c.SendText(register)
	m, err := c.Next(5 * time.Second)
	if err != nil || !strings.Contains(m.Text(), `"registered"`) {
		t.Fatalf("register: %s %v", m.Text(), err)
	}
	go func() {
		for {
			m, err := c.Next(30 * time.Second)
			if err != nil {
				return
			}
			var call map[string]any
			json.Unmarshal(m.Data, &call)
			if call["type"] == "call" {
				c.SendText(answer(call))
			}
		}
	}()
	return c
}

func TestToolsThroughControlRoute(t *testing.T) {
	h, _ := start(t, nil)
	toolsPage(t, h, `{"v":1,"type":"register","ns":"morpho","hash":"a1","tools":[{"name":"set-params","description":"set","inputSchema":{"type":"object"}}]}`,
		func(call map[string]any) string {
			args, _ := json.Marshal(call["args"])
			return fmt.Sprintf(`{"v":1,"type":"result","callId":%q,"ok":true,"value":{"echo":%s}}`, call["callId"], args)
		})
	cl := control(t, h)
	ctx := context.Background()
	regs, err := cl.Tools(ctx)
	if err != nil || len(regs) != 1 || regs[0].NS != "morpho" || regs[0].Tools[0].Name != "set-params" {
		t.Fatalf("tools: %+v %v", regs, err)
	}
	res, err := cl.Call(ctx, tools.CallRequest{Name: "set-params", Args: json.RawMessage(`{"k":2}`)})
	if err != nil || !res.OK || string(res.Value) != `{"echo":{"k":2}}` {
		t.Fatalf("call: %+v %v", res, err)
	}
	res, _ = cl.Call(ctx, tools.CallRequest{Name: "nope"})
	if res.OK || res.ErrorKind != "route" || !strings.Contains(res.Error, `no page tool named "nope"`) {
		t.Fatalf("no match: %+v", res)
	}
	// health summary
	r := h.Do(adaptertest.Request{Path: "/health"})
	if !strings.Contains(string(r.Body), `"pageTools":{"clients":1,"namespaces":1,"tools":1}`) {
		t.Fatalf("health: %s", r.Body)
	}
	// unauthenticated, wrong key, or any Origin: refused
	body := []byte(`{"name":"set-params"}`)
	for _, tt := range []struct {
		hdr    http.Header
		status int
	}{
		{http.Header{}, 401},
		{http.Header{"Authorization": {"Bearer wrong"}}, 401},
		{http.Header{"Authorization": {"Bearer " + cl.Key}, "Origin": {"http://localhost:5173"}}, 403},
	} {
		if r := h.Do(adaptertest.Request{Method: "POST", Path: "/control/call", Body: body, Header: tt.hdr}); r.Status != tt.status {
			t.Errorf("control call with %v: %d, want %d", tt.hdr, r.Status, tt.status)
		}
	}
}

func TestFilesWrittenAndRemoved(t *testing.T) {
	h, _ := start(t, nil)
	reg := filepath.Join(RegistryDir(h.Dirs), fmt.Sprintf("%d.json", os.Getpid()))
	data, err := os.ReadFile(reg)
	if err != nil {
		t.Fatal(err)
	}
	var e RegistryEntry
	json.Unmarshal(data, &e)
	cwd, _ := os.Getwd()
	if e.Schema != 1 || e.PID != os.Getpid() || e.PPID != os.Getppid() || e.Port != h.Port() || e.CWD != cwd || e.Kind != "hub" || e.StartedAt.IsZero() {
		t.Fatalf("registry entry %+v", e)
	}
	if m := adaptertest.FileMode(t, reg); m != 0o600 {
		t.Fatalf("registry mode %v", m)
	}
	if m := adaptertest.FileMode(t, ControlPath(h.Dirs)); m != 0o600 {
		t.Fatalf("control file mode %v", m)
	}
	if m := adaptertest.FileMode(t, StateDir(h.Dirs)); m != 0o700 {
		t.Fatalf("state dir mode %v", m)
	}
	cf1, _ := os.ReadFile(ControlPath(h.Dirs))
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{reg, ControlPath(h.Dirs)} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s survived shutdown", p)
		}
	}
	if strings.Contains(string(cf1), `"key": ""`) {
		t.Fatal("empty control key")
	}
}

func TestReload(t *testing.T) {
	h, _ := start(t, nil)
	ws := h.MustDial("/ws", adaptertest.DialOptions{})
	sendAck(t, ws, helloFrame(t, "text-concat"))
	sendAck(t, ws, dataFrame(t, "mid-turn", false, `{"text":"abandoned"}`))
	tl := h.MustDial("/tools", adaptertest.DialOptions{})
	// An answered register proves the server tracks the /tools socket (the
	// client's dial returns before the server has finished its side).
	tl.SendText(`{"v":1,"type":"register","ns":"reload","hash":"h","tools":[]}`)
	if _, err := tl.Next(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	r := h.Do(adaptertest.Request{Method: "POST", Path: "/debug/api/reload"})
	var got struct {
		Reloaded       bool `json:"reloaded"`
		Generation     int  `json:"generation"`
		SocketsDropped int  `json:"socketsDropped"`
	}
	json.Unmarshal(r.Body, &got)
	if r.Status != 200 || !got.Reloaded || got.Generation != 1 || got.SocketsDropped != 2 {
		t.Fatalf("reload: %d %s", r.Status, r.Body)
	}
	for _, c := range []*adaptertest.WSClient{ws, tl} {
		select {
		case <-c.Closed():
		case <-time.After(5 * time.Second):
			t.Fatal("socket not dropped")
		}
		if code, _ := c.CloseCode(); code != 1012 {
			t.Fatalf("close code %d, want 1012", code)
		}
	}
	res, _ := control(t, h).Reload(context.Background())
	if res["generation"].(float64) != 2 {
		t.Fatalf("control reload: %v", res)
	}
	for _, path := range []string{"/health", "/debug/api/info"} {
		if r := h.Do(adaptertest.Request{Path: path}); !strings.Contains(string(r.Body), `"generation":2`) {
			t.Fatalf("%s: %s", path, r.Body)
		}
	}
	if len(records(t, h)) != 0 {
		t.Fatal("an abandoned turn sent a prompt")
	}
	c := h.MustDial("/ws", adaptertest.DialOptions{})
	if r := sendAck(t, c, helloFrame(t, "text-concat")); !r.OK {
		t.Fatal("no /ws after reload")
	}
}
