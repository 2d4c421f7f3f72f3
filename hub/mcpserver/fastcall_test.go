package mcpserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// twin is the same forwarded page on two servers, one answering its calls
// on the fast path and one leaving them to the SDK, so that every answer
// of the one can be compared with the other's byte for byte.
type twin struct {
	fast, sdk   *rawClient
	fastS, sdkS *Server
}

func newTwin(t testing.TB, call CallFunc, opts Options) *twin {
	t.Helper()
	mk := func(sdkOnly bool) (*Server, *rawClient) {
		s := testServer(opts)
		s.sdkOnly = sdkOnly
		fw := s.Forward(Prefix("p_"), call)
		fw.Sync(context.Background(), []*mcp.Tool{tool("page.tool", ""), tool("other", "")})
		return s, serveRawMax(t, s, 1<<20)
	}
	w := &twin{}
	w.fastS, w.fast = mk(false)
	w.sdkS, w.sdk = mk(true)
	return w
}

func (w *twin) setT(t testing.TB) { w.fast.t, w.sdk.t = t, t }

// both sends line to each server and returns each one's answer.
func (w *twin) both(line string) (fast, sdk string) {
	w.fast.send(line)
	w.sdk.send(line)
	return w.fast.recv(), w.sdk.recv()
}

func (w *twin) initialize(version string) {
	w.fast.initialize(version)
	w.sdk.initialize(version)
}

// pngBytes is an image that is not valid UTF-8.
var pngBytes = []byte("\x89PNG\r\n\x1a\n fake image bytes \x00\xff")

func bigText() string {
	var b strings.Builder
	for b.Len() < 1<<20 {
		b.WriteString(`{"say":"<b>é & 日本</b>","n":1}` + "\n\t\u2028")
	}
	return b.String()
}

func bigImage() []byte {
	b := make([]byte, 2<<20)
	r := rand.NewChaCha8([32]byte{1})
	r.Read(b)
	return b
}

// The fast path writes every result, and every failure, exactly as the
// SDK path does: the same bytes for each result in this table.
func TestFastPathBytesMatchSDK(t *testing.T) {
	img, _ := ImageFromDataURL("data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBytes))
	prio := 0.5
	type outcome struct {
		res   *mcp.CallToolResult
		err   error
		panic bool
		fast  bool // the fast path writes it itself (else via the SDK's encoder)
	}
	cases := []struct {
		name string
		out  func() outcome
	}{
		{"text", func() outcome { return outcome{res: TextResult(`{"ok":true,"say":"ok","objects":3}`)} }},
		{"text to escape", func() outcome {
			return outcome{res: TextResult("<a href=\"x\">&amp;</a>\n\t\r\b\f\x00\x1f\x7f é 日本 \u2028\u2029 \xff\xfe\xc3 \\ /")}
		}},
		{"empty text", func() outcome { return outcome{res: TextResult("")} }},
		{"error result", func() outcome { return outcome{res: ErrorResult("No page is attached. <call wait>")} }},
		{"text and image", func() outcome {
			return outcome{res: &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"ok":true}`}, img}}}
		}},
		{"image without data or type", func() outcome { return outcome{res: &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{}}}} }},
		{"image with an odd type", func() outcome {
			return outcome{res: &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "a<b>&\"c", Data: []byte{0}}}}}
		}},
		{"no content", func() outcome { return outcome{res: &mcp.CallToolResult{}} }},
		{"no content, error", func() outcome { return outcome{res: &mcp.CallToolResult{IsError: true}} }},
		{"empty content", func() outcome { return outcome{res: &mcp.CallToolResult{Content: []mcp.Content{}}} }},
		{"large text", func() outcome { return outcome{res: TextResult(bigText())} }},
		{"large image", func() outcome {
			return outcome{res: &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: bigImage()}}}}
		}},
		{"meta", func() outcome {
			return outcome{res: &mcp.CallToolResult{Meta: mcp.Meta{"k": "<v>"}, Content: []mcp.Content{&mcp.TextContent{Text: "x"}}}}
		}},
		{"structured", func() outcome {
			return outcome{res: &mcp.CallToolResult{StructuredContent: map[string]any{"a": "<b>"}, Content: []mcp.Content{&mcp.TextContent{Text: "x"}}}}
		}},
		{"structured, no content", func() outcome { return outcome{res: &mcp.CallToolResult{StructuredContent: []int{1}}} }},
		{"annotated text", func() outcome {
			return outcome{res: &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Priority: prio}}}}}
		}},
		{"text with meta", func() outcome {
			return outcome{res: &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x", Meta: mcp.Meta{"a": 1}}}}}
		}},
		{"audio", func() outcome {
			return outcome{res: &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")}}}}
		}},
		{"no result", func() outcome { return outcome{} }},
		{"error", func() outcome { return outcome{err: errors.New("the bridge is gone <now>")} }},
		{"coded error", func() outcome { return outcome{err: &jsonrpc.Error{Code: -32000, Message: "custom"}} }},
		{"wrapped coded error", func() outcome {
			return outcome{err: fmt.Errorf("outer: %w", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "inner"})}
		}},
		{"panic", func() outcome { return outcome{panic: true} }},
	}
	var cur atomic.Pointer[outcome]
	w := newTwin(t, func(context.Context, string, json.RawMessage) (*mcp.CallToolResult, error) {
		o := cur.Load()
		if o.panic {
			panic("page sent nonsense")
		}
		return o.res, o.err
	}, Options{})
	w.initialize("2025-06-18")
	ids := []string{`7`, `0`, `-5`, `9007199254740991`, `"s"`, `"a<b>&\u2028\"é"`, `""`}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w.setT(t)
			id := ids[i%len(ids)]
			line := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"p_page_tool","arguments":{}}}`
			before := w.fastS.fastCalls.Load()
			// Each server gets its own result: the SDK path may add to it.
			o := tc.out()
			cur.Store(&o)
			w.fast.send(line)
			fast := w.fast.recv()
			o = tc.out()
			cur.Store(&o)
			w.sdk.send(line)
			sdk := w.sdk.recv()
			if w.fastS.fastCalls.Load() != before+1 {
				t.Fatal("the call did not take the fast path")
			}
			if fast != sdk {
				t.Fatalf("\nfast %s\n sdk %s", clipped(fast), clipped(sdk))
			}
		})
	}
	w.setT(t)
	// The direct encoder covers what a page answers with; the rest goes
	// through the SDK's and is only compared above.
	for _, r := range []*mcp.CallToolResult{TextResult("x"), ErrorResult("x"), {Content: []mcp.Content{img}}, {}} {
		if !plainResult(r) {
			t.Fatalf("%+v is not written directly", r)
		}
	}
}

func clipped(s string) string {
	if len(s) > 200 {
		return s[:200] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}

// paramCases are tools/call params, each taken by the fast path or not;
// either way the answer is the SDK's.
var paramCases = []struct {
	params string
	fast   bool
}{
	{`{"name":"p_page_tool"}`, true},
	{`{"name":"p_page_tool","arguments":{}}`, true},
	{`{ "name" : "p_page_tool" , "arguments" : { "a" : [1, 2.50, "<x>"] ,"b":null } }`, true},
	{`{"arguments":{"a":1},"name":"p_page_tool","_meta":{"progressToken":5}}`, true},
	{`{"name":"p_p\u0061ge_tool"}`, true},
	{`{"name":"p_other","arguments":{"\u00e9":"\ud83d\ude00"}}`, true},
	{`{"name":"p_page_tool","_meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18"}}`, false},
	{`{"name":"p_page_tool","_meta":null}`, false},
	{`{"name":"p_page_tool","arguments":null}`, false},
	{`{"name":"p_page_tool","arguments":[1]}`, false},
	{`{"name":"p_page_tool","arguments":"x"}`, false},
	{`{"Name":"p_page_tool"}`, false},
	{`{"name":"p_page_tool","Arguments":{}}`, false},
	{`{"name":"p_page_tool","extra":1}`, false},
	{`{"name":"p_page_tool","requestState":"x"}`, false},
	{`{"n\u0061me":"p_page_tool"}`, false},
	{`{"name":"p_page_tool","name":"p_other"}`, false},
	{`{"name":5,"name":"p_page_tool"}`, false},
	{`{"name":"p_page_tool","_meta":5,"_meta":{}}`, false},
	{`{"name":"p_page_tool","arguments":{"a":1},"arguments":{"b":2}}`, false},
	{`{"name":"p_page_tool","_meta":{"io.modelcontextprotocol/protocolVersion":1}}`, false},
	{`{"name":"p_page_tool","_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"}}`, false},
	{`{"name":"p_page_tool","_meta":{"x":1e400}}`, false}, // the SDK cannot decode it
	{`{"name":"p_page_tool","_meta":{"x":"1e400","y":[{"z":-1e999}]}}`, false},
	{`{"name":"p_page_tool","arguments":{"x":1e400}}`, true},
	{`{"name":"p_page_tool","_meta":{"x":1e-400,"y":"1e400"}}`, true},
	{`{"name":"p_page_tool","_meta":{"x":123456789012345678901234567890}}`, true},
	{`{"name":"p_page_tool","_meta":{"x":"\ud800","y":"\udc00\ud800x"}}`, true},
	{"{\"name\":\"p_page_tool\",\"_meta\":{\"x\":\"\xff\xfe\",\"\xc3\":1}}", false}, // not UTF-8: -32700 before either path
	{`{"name":"p_page_tool","_meta":{"progressToken":5,"x":[true,false,null,{"a":-0.5e-3}]}}`, true},
	// The SDK refuses params nested deeper than 1000.
	{`{"name":"p_page_tool","arguments":{"deep":` + strings.Repeat("[", 998) + strings.Repeat("]", 998) + `}}`, true},
	{`{"name":"p_page_tool","arguments":{"deep":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}}`, false},
	{`{"name":"p_page_tool","_meta":{"deep":` + strings.Repeat("{\"a\":", 998) + `1` + strings.Repeat("}", 998) + `}}`, true},
	{`{"name":"p_page_tool","_meta":{"deep":` + strings.Repeat("{\"a\":", 999) + `1` + strings.Repeat("}", 999) + `}}`, false},
	{`{"name":"nope"}`, false},
	{`{"name":"echo"}`, false},
	{`{"name":""}`, false},
	{`{"name":5}`, false},
	{`{}`, false},
	{`null`, false},
	{`[]`, false},
}

// Arguments reach the page as the SDK hands them over, and whatever the
// params, both paths answer alike.
func TestFastPathParamsMatchSDK(t *testing.T) {
	w := newTwin(t, echoCall, Options{})
	w.initialize("2025-06-18")
	for i, tc := range paramCases {
		t.Run(clipped(tc.params), func(t *testing.T) {
			w.setT(t)
			before := w.fastS.fastCalls.Load()
			fast, sdk := w.both(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, i, tc.params))
			if took := w.fastS.fastCalls.Load() != before; took != tc.fast {
				t.Errorf("fast path taken: %v, want %v", took, tc.fast)
			}
			if fast != sdk {
				t.Fatalf("\nfast %s\n sdk %s", fast, sdk)
			}
		})
	}
	w.setT(t)
	// Without params at all.
	if fast, sdk := w.both(`{"jsonrpc":"2.0","id":"np","method":"tools/call"}`); fast != sdk {
		t.Fatalf("\nfast %s\n sdk %s", fast, sdk)
	}
}

// echoCall answers with what it was called with, nil arguments told apart.
func echoCall(_ context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	return TextResult(fmt.Sprintf("%s %q %v", name, args, args == nil)), nil
}

// Before the initialize answer, and for a client of a multi-round-trip
// protocol, calls are the SDK's.
func TestFastPathWaitsForInitialize(t *testing.T) {
	w := newTwin(t, echoCall, Options{})
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"p_page_tool"}}`
	fast, sdk := w.both(call)
	if fast != sdk || !strings.Contains(fast, `"code":-32600`) {
		t.Fatalf("\nfast %s\n sdk %s", fast, sdk)
	}
	w.initialize("2026-07-28")
	if fast, sdk := w.both(call); fast != sdk || !strings.Contains(fast, `"resultType"`) {
		t.Fatalf("\nfast %s\n sdk %s", fast, sdk)
	}
	if n := w.fastS.fastCalls.Load(); n != 0 {
		t.Fatalf("%d calls took the fast path", n)
	}
}

// A fast call is agent activity like any message, is cancelled by
// notifications/cancelled and then not answered, and a repeated id is
// dropped as the SDK drops it.
func TestFastPathCancelAndActivity(t *testing.T) {
	var messages atomic.Int32
	started := make(chan struct{}, 1)
	var mu sync.Mutex
	var ctxErrs []error
	s := testServer(Options{OnMessage: func() { messages.Add(1) }})
	fw := s.Forward(nil, func(ctx context.Context, name string, _ json.RawMessage) (*mcp.CallToolResult, error) {
		if name == "quick" {
			return TextResult("quick"), nil
		}
		started <- struct{}{}
		<-ctx.Done()
		mu.Lock()
		ctxErrs = append(ctxErrs, ctx.Err())
		mu.Unlock()
		return TextResult("too late"), nil
	})
	fw.Sync(context.Background(), []*mcp.Tool{tool("block", ""), tool("quick", "")})
	c := serveRaw(t, s)
	c.initialize("2025-06-18")
	c.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"block"}}`)
	<-started
	c.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"quick"}}`)
	// The same id in a call the fast path does not take (the SDK's): the
	// SDK does not know the fast call's id, so it must be dropped here.
	c.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"quick","extra":1}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"user"}}`)
	waitInflightEmpty(t, s)
	if got := c.untilPing(); len(got) != 0 {
		t.Fatalf("answered: %q", got)
	}
	c.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"quick"}}`)
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":10,"result":{"content":[{"type":"text","text":"quick"}],"isError":false}}`; got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
	if n := s.fastCalls.Load(); n != 2 {
		t.Fatalf("%d fast calls, want 2", n)
	}
	// initialize, call, two repeated calls, cancelled, ping, call
	if n := messages.Load(); n != 7 {
		t.Fatalf("%d messages seen, want 7", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ctxErrs) != 1 || ctxErrs[0] != context.Canceled {
		t.Fatalf("call contexts ended with %v", ctxErrs)
	}
}

// The end of the input cancels the fast calls still running once the
// drain's grace is over, and Serve returns once they have (goleak checks
// nothing is left behind).
func TestFastPathEndsWithInput(t *testing.T) {
	started := make(chan struct{})
	var ended atomic.Bool
	s := testServer(Options{})
	s.drainFor = time.Millisecond // the call never ends by itself
	fw := s.Forward(nil, func(ctx context.Context, _ string, _ json.RawMessage) (*mcp.CallToolResult, error) {
		close(started)
		<-ctx.Done()
		ended.Store(true)
		return TextResult("stopped"), nil
	})
	fw.Sync(context.Background(), []*mcp.Tool{tool("block", "")})
	c := serveRaw(t, s)
	c.initialize("2025-06-18")
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}}`)
	<-started
	if r := c.close(); r.err != nil || !r.announced {
		t.Fatalf("Serve = %+v", r)
	}
	if !ended.Load() || s.fastCalls.Load() != 1 {
		t.Fatal("the fast call was not cancelled before Serve returned")
	}
}

// Fast calls run side by side, however many; the workers that ran them
// are gone once Serve returns (goleak checks).
func TestFastPathConcurrentCalls(t *testing.T) {
	const n = 5
	started, release := make(chan struct{}, n), make(chan struct{})
	s := testServer(Options{})
	fw := s.Forward(nil, func(_ context.Context, _ string, args json.RawMessage) (*mcp.CallToolResult, error) {
		started <- struct{}{}
		<-release
		return TextResult(string(args)), nil
	})
	fw.Sync(context.Background(), []*mcp.Tool{tool("wait", "")})
	c := serveRaw(t, s)
	c.initialize("2025-06-18")
	for round := range 2 {
		for i := range n {
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"wait","arguments":{"i":%d}}}`, i, i))
		}
		for range n {
			<-started // all n at once: none waits for another
		}
		if round == 0 {
			close(release)
		}
		got := map[string]bool{}
		for range n {
			got[c.recv()] = true
		}
		for i := range n {
			want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"{\"i\":%d}"}],"isError":false}}`, i, i)
			if !got[want] {
				t.Fatalf("round %d: no %s in %v", round, want, got)
			}
		}
	}
	if r := c.close(); r.err != nil || s.fastCalls.Load() != 2*n {
		t.Fatalf("Serve = %+v after %d fast calls", r, s.fastCalls.Load())
	}
}

// FuzzFastPathMatchesSDK: whatever the params of a tools/call, the fast
// path takes the call only where it answers as the SDK does, and hands the
// page the arguments the SDK would.
func FuzzFastPathMatchesSDK(f *testing.F) {
	for _, tc := range paramCases {
		f.Add(tc.params)
	}
	f.Add(`{"name":"p_page_tool\u0000"}`)
	f.Add("{\"name\":\"p_page_tool\",\"arguments\":{\"\xff\":1}}")
	f.Add(`{"name":"p_page_tool","arguments":{"s":"\"}]\\"}}`)
	f.Fuzz(func(t *testing.T, params string) {
		// A twin per input: one that went wrong cannot confuse the next.
		w := newTwin(t, echoCall, Options{})
		w.initialize("2025-06-18")
		params = strings.ReplaceAll(params, "\n", " ") // one line per message
		fast, sdk := w.both(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`)
		if fast != sdk {
			t.Fatalf("params %s\nfast %s\n sdk %s", params, fast, sdk)
		}
	})
}

// FuzzAppendString: strings go out exactly as encoding/json writes them.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "<&>", "\x00\x1f\x7f\b\f\n\r\t", "\u2028\u2029", "\xff\xfe", "é日本\U0001F600", `"\/`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s, true); !bytes.Equal(got, want) {
			t.Fatalf("escapeHTML: got %s, want %s", got, want)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		if got := appendString(nil, s, false); !bytes.Equal(got, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))) {
			t.Fatalf("no escapeHTML: got %s, want %s", got, buf.Bytes())
		}
	})
}
