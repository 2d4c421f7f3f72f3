package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func testServer(o Options) *Server {
	if o.Name == "" {
		o.Name, o.Version, o.Instructions = "t", "1", "use me"
	}
	s := New(o)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return TextResult("hi"), nil })
	s.AddTool(&mcp.Tool{Name: "fail", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return ErrorResult("no"), nil
		})
	return s
}

// The answers where the SDK's behaviour and our specs differ, byte for byte.
func TestServeRawAnswers(t *testing.T) {
	c := serveRaw(t, testServer(Options{}))
	c.initialize("2025-06-18")
	cases := []struct{ name, send, want string }{
		{"ping", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"unknown method", `{"jsonrpc":"2.0","id":2,"method":"foo/bar"}`, `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found: \"foo/bar\""}}`},
		{"feature not offered", `{"jsonrpc":"2.0","id":3,"method":"resources/list"}`, `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"method not found: \"resources/list\""}}`},
		{"arguments not an object", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":[1]}}`, `{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"tools/call params.arguments must be an object"}}`},
		{"no tool name", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{}}`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"tools/call needs params.name"}}`},
		{"isError false is said", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, `{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"hi"}],"isError":false}}`},
		{"isError true", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fail"}}`, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"no"}],"isError":true}}`},
		{"unknown tool", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"nope"}}`, `{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"unknown tool \"nope\""}}`},
		{"second initialize", `{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`, `{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"duplicate \"initialize\" received"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			c.send(tc.send)
			if got := c.recv(); got != tc.want {
				t.Fatalf("\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	c.t = t
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/unknown","params":{}}`)
	if got := c.untilPing(); len(got) != 0 {
		t.Fatalf("notifications were answered: %q", got)
	}
}

// Before initialize, and for initialize params that do not decode, the SDK
// answers with code 0; JSON-RPC has a code for each.
func TestServeGivesErrorsACode(t *testing.T) {
	cases := []struct{ name, send, prefix string }{
		{"call before initialize", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,`},
		{"initialize params not an object", `{"jsonrpc":"2.0","id":2,"method":"initialize","params":[1]}`, `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := serveRaw(t, testServer(Options{}))
			c.send(tc.send)
			if got := c.recv(); !strings.HasPrefix(got, tc.prefix) {
				t.Fatalf("\n got %s\nwant %s…", got, tc.prefix)
			}
		})
	}
	// An initialize that failed initialized nothing: a call after it is
	// still one during initialization, not an internal error.
	t.Run("call after a failed initialize", func(t *testing.T) {
		c := serveRaw(t, testServer(Options{}))
		c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}`)
		c.recv()
		c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		if got, want := c.recv(), `{"jsonrpc":"2.0","id":2,"error":{"code":-32600,`; !strings.HasPrefix(got, want) {
			t.Fatalf("\n got %s\nwant %s…", got, want)
		}
	})
}

func TestInitializeProtocolVersion(t *testing.T) {
	cases := []struct {
		echo       bool
		asked      string
		wantAnswer string
	}{
		{true, "1999-12-31", "1999-12-31"}, // Stitch Slop §3.2: whatever was asked
		{true, "2025-03-26", "2025-03-26"},
		{false, "1999-12-31", "2025-11-25"}, // the SDK negotiates its newest handshake version
		{false, "2025-06-18", "2025-06-18"},
	}
	for _, tc := range cases {
		t.Run(tc.asked, func(t *testing.T) {
			c := serveRaw(t, testServer(Options{EchoProtocolVersion: tc.echo}))
			got := c.initialize(tc.asked)
			want := `{"jsonrpc":"2.0","id":0,"result":{"capabilities":{"tools":{"listChanged":true}},"instructions":"use me","protocolVersion":"` +
				tc.wantAnswer + `","serverInfo":{"name":"t","version":"1"}}}`
			if got != want {
				t.Fatalf("\n got %s\nwant %s", got, want)
			}
		})
	}
}

// OnInit runs before the initialize answer goes out, OnReady after it, and
// no notification reaches a client that has not initialized.
func TestLifecycleLegacyClient(t *testing.T) {
	var inits, readies, messages atomic.Int32
	s := testServer(Options{
		OnInit:    func() { inits.Add(1) },
		OnReady:   func() { readies.Add(1) },
		OnMessage: func() { messages.Add(1) },
	})
	c := serveRaw(t, s)
	s.NotifyToolsChanged(context.Background())
	if got := c.untilPing(); len(got) != 0 {
		t.Fatalf("notified before initialize: %q", got)
	}
	if inits.Load() != 0 || readies.Load() != 0 {
		t.Fatal("a ping announced the client")
	}
	c.initialize("2025-06-18")
	if inits.Load() != 1 {
		t.Fatal("OnInit had not run when the initialize answer arrived")
	}
	// Notify waits for the session to be ready, which includes OnReady.
	s.NotifyToolsChanged(context.Background())
	if readies.Load() != 1 {
		t.Fatal("OnReady had not run when the first notification went out")
	}
	if got := c.untilPing(); len(got) != 1 || got[0] != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
		t.Fatalf("list_changed = %q, want the bare notification", got)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.untilPing()
	if r := c.close(); !r.announced || r.err != nil {
		t.Fatalf("Serve = %+v, want announced and nil", r)
	}
	// ping, initialize, ping, initialized, ping
	if inits.Load() != 1 || readies.Load() != 1 || messages.Load() != 5 {
		t.Fatalf("%d inits, %d readies, %d messages", inits.Load(), readies.Load(), messages.Load())
	}
}

const statelessList = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{` +
	`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

// A stateless client (SEP-2575) never initializes: its first request
// announces it, unless the server does not serve that protocol.
func TestLifecycleStatelessClient(t *testing.T) {
	cases := []struct {
		name     string
		versions []string
		request  string
		announce bool
	}{
		{"served", nil, statelessList, true},
		{"not served", []string{"2025-11-25", "2025-06-18"}, statelessList, false},
		// The SDK refuses a stateless request without client capabilities
		// (-32602): it announced nothing.
		{"no capabilities", nil, strings.Replace(statelessList, `,"io.modelcontextprotocol/clientCapabilities":{}`, "", 1), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var inits, readies atomic.Int32
			s := testServer(Options{ProtocolVersions: tc.versions, OnInit: func() { inits.Add(1) }, OnReady: func() { readies.Add(1) }})
			c := serveRaw(t, s)
			c.send(tc.request)
			answer := c.recv()
			if tc.announce != strings.Contains(answer, `"tools":[`) {
				t.Fatalf("answer %s", answer)
			}
			want := int32(0)
			if tc.announce {
				want = 1
			}
			if inits.Load() != want || readies.Load() != want {
				t.Fatalf("%d inits, %d readies, want %d", inits.Load(), readies.Load(), want)
			}
			if r := c.close(); r.announced != tc.announce {
				t.Fatalf("Serve reported announced=%v", r.announced)
			}
		})
	}
}

// MCP: a cancelled request gets no answer; the SDK would send one.
func TestCancelledCallGetsNoAnswer(t *testing.T) {
	s := testServer(Options{})
	started, finished := make(chan struct{}), make(chan struct{})
	s.AddTool(&mcp.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(started)
			<-ctx.Done()
			defer close(finished)
			return TextResult("too late"), nil
		})
	c := serveRaw(t, s)
	c.initialize("2025-06-18")
	c.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"block"}}`)
	<-started
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"user"}}`)
	<-finished
	// The handler has returned; its answer is dropped before a ping sent
	// now can be answered, or it would show up here.
	waitInflightEmpty(t, s)
	if got := c.untilPing(); len(got) != 0 {
		t.Fatalf("a cancelled call was answered: %q", got)
	}
}

// waitInflightEmpty waits until every call read has been answered (or its
// answer dropped). The bound only keeps a broken test from hanging: a
// loaded machine may take a while to run the handler's last steps.
func waitInflightEmpty(t *testing.T, s *Server) {
	t.Helper()
	for start := time.Now(); time.Since(start) < recvLimit; {
		empty := true
		s.mu.Lock()
		for sess := range s.sessions {
			sess.mu.Lock()
			empty = empty && len(sess.inflight) == 0
			sess.mu.Unlock()
		}
		s.mu.Unlock()
		if empty {
			return
		}
		yield()
	}
	t.Fatal("a call is still in flight")
}

// A panicking handler ends its call with -32603, not the process.
func TestHandlerPanicIsAnInternalError(t *testing.T) {
	s := testServer(Options{})
	s.AddTool(&mcp.Tool{Name: "boom", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { panic("page sent nonsense") })
	c := serveRaw(t, s)
	c.initialize("2025-06-18")
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"boom"}}`)
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error"}}`; got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
	c.untilPing()
}

// Ending ctx ends the session and cancels the handlers still running;
// the SDK's own Close would wait for them.
func TestServeEndsWithContext(t *testing.T) {
	s := testServer(Options{})
	started := make(chan struct{})
	var handlerErr atomic.Value
	s.AddTool(&mcp.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(started)
			<-ctx.Done()
			handlerErr.Store(ctx.Err())
			return TextResult("stopped"), nil
		})
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW := io.Pipe()
	go io.Copy(io.Discard, outR)
	defer outW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.Serve(ctx, &LineTransport{In: inR, Out: outW})
		done <- err
	}()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`+"\n")
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}}`+"\n")
	<-started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve = %v, want context.Canceled", err)
	}
	if handlerErr.Load() == nil {
		t.Fatal("the running handler was not cancelled")
	}
}

// A stateless client (SEP-2575) takes list_changed only on a
// subscriptions/listen stream it opened, stamped with that stream's id
// (as the SDK sends it); the bare legacy notification is not for it.
func TestStatelessListChanged(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, listen := range []bool{false, true} {
		t.Run(map[bool]string{false: "not listening", true: "listening"}[listen], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := testServer(Options{})
				fw := s.Forward(nil, nil)
				c := serveRaw(t, s)
				c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`)
				c.recv()
				var want []string
				if listen {
					c.send(`{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + meta + `}}`)
					c.recv() // notifications/subscriptions/acknowledged
					want = []string{`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"l"}}}`}
				}
				fw.Sync(context.Background(), []*mcp.Tool{{Name: "x", InputSchema: json.RawMessage(`{"type":"object"}`)}})
				time.Sleep(time.Second)
				synctest.Wait()
				until := func(id string) (got []string) {
					c.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/list","params":{` + meta + `}}`)
					for l := c.recv(); !strings.HasPrefix(l, `{"jsonrpc":"2.0","id":"`+id+`"`); l = c.recv() {
						got = append(got, l)
					}
					return got
				}
				if got := until("sync"); strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("\n got %q\nwant %q", got, want)
				}
				// A stream the client cancelled takes no more.
				c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"l"}}`)
				synctest.Wait()
				fw.Sync(context.Background(), nil)
				synctest.Wait()
				if got := until("sync2"); len(got) != 0 {
					t.Fatalf("after the stream ended: %q", got)
				}
				c.close()
			})
		})
	}
}

// The SDK's message for params that do not decode quotes them whole: a
// client's 10 MiB argument came back in a 10 MiB message. JSON-RPC 2.0
// §5.1 asks for "a concise single sentence"; it is cut.
func TestErrorMessageIsBounded(t *testing.T) {
	c := serveRawMax(t, testServer(Options{}), 1<<20)
	c.initialize("2025-06-18")
	big := strings.Repeat("é", 100<<10)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"` + big + `","_meta":5}}`)
	got := c.recv()
	var a struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(got), &a); err != nil || a.Error.Code != -32602 {
		t.Fatalf("answer %.300s (%v)", got, err)
	}
	if n := len(a.Error.Message); n > maxErrorMessage || !utf8.ValidString(a.Error.Message) || !strings.HasPrefix(a.Error.Message, "handling 'ping'") {
		t.Fatalf("message of %d bytes: %.300s", n, a.Error.Message)
	}
}
