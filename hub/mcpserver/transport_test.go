package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// connect opens a LineTransport over in, writing to out.
func connect(t *testing.T, in io.Reader, out io.Writer, maxLine int) *lineConn {
	t.Helper()
	c, err := (&LineTransport{In: in, Out: out, MaxLine: maxLine}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*lineConn)
}

// Every line the SDK could not decode is answered here, byte for byte as
// JSON-RPC 2.0 §5 asks (id null), and the next message still arrives.
func TestLineTransportAnswersInvalidLines(t *testing.T) {
	const next = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	cases := []struct {
		name, line string
		want       string // exact answer; "" for none
		prefix     bool   // want is a prefix (the decoder's message follows)
	}{
		{"garbage", `{oops`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: `, true},
		{"truncated", `{"jsonrpc":"2.0","id":1,`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: `, true},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batches are not supported"}}`, false},
		{"not an object", `5`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a message must be a JSON object"}}`, false},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"id must be a string or an integer"}}`, false},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"id must be a string or an integer"}}`, false},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"id must be a string or an integer"}}`, false},
		{"id past 2^53", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"id must be a string or an integer"}}`, false},
		// JSON text is UTF-8: decoding would turn each invalid byte into
		// U+FFFD (an answer carrying another id than the one asked, two
		// such calls sharing one), and arguments would carry the bytes on
		// to a page, whose browser closes the socket (1007).
		{"id not UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the message is not valid UTF-8"}}`, false},
		{"escaped id not UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":\"\\n\xfe\",\"method\":\"ping\"}", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the message is not valid UTF-8"}}`, false},
		{"arguments not UTF-8", "{\"id\":3,\"method\":\"tools/call\",\"params\":{\"arguments\":{\"a\":\"\xc3\"}}}", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the message is not valid UTF-8"}}`, false},
		{"id a lone surrogate", `{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"id must be a string or an integer"}}`, false},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":7}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"method must be a string"}}`, false},
		{"too long", `{"jsonrpc":"2.0","id":1,"method":"` + strings.Repeat("x", 100) + `"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message larger than the line limit"}}`, false},
		// JSON-RPC 2.0 §4: "jsonrpc" MUST be exactly "2.0" (the SDK's
		// decoder holds every message to it).
		{"request without jsonrpc", `{"id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"\"jsonrpc\" must be exactly \"2.0\""}}`, false},
		{"request of JSON-RPC 1.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"\"jsonrpc\" must be exactly \"2.0\""}}`, false},
		{"jsonrpc a number", `{"jsonrpc":2.0,"method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"\"jsonrpc\" must be exactly \"2.0\""}}`, false},
		{"response without jsonrpc", `{"id":5,"result":{}}`, "", false},
		// JSON-RPC 2.0 §7 answers {"foo": "boo"} so: an invalid Request.
		{"neither request nor response", `{"hello":"there"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a request needs a method"}}`, false},
		{"empty object", `{}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a request needs a method"}}`, false},
		{"id alone", `{"jsonrpc":"2.0","id":4}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a request needs a method"}}`, false},
		// A response is never answered, even a malformed one.
		{"response with a null result", `{"jsonrpc":"2.0","id":5,"result":null}`, "", false},
		{"error response with a null id", `{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":""}}`, "", false},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, "", false},
		{"blank", `   `, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			c := connect(t, strings.NewReader(tc.line+"\n"+next+"\n"), &out, 64)
			msg, err := c.Read(context.Background())
			if err != nil {
				t.Fatalf("the session did not carry on: %v", err)
			}
			if req, ok := msg.(*jsonrpc.Request); !ok || req.Method != "ping" {
				t.Fatalf("next message = %#v", msg)
			}
			got := strings.TrimSuffix(out.String(), "\n")
			switch {
			case tc.want == "" && got != "":
				t.Fatalf("answered %s", got)
			case tc.prefix && !strings.HasPrefix(got, tc.want):
				t.Fatalf("answer\n got %s\nwant %s…", got, tc.want)
			case !tc.prefix && got != tc.want:
				t.Fatalf("answer\n got %s\nwant %s", got, tc.want)
			}
			if got != "" && strings.Count(out.String(), "\n") != 1 {
				t.Fatalf("want exactly one line, got %q", out.String())
			}
		})
	}
}

func TestLineTransportDecodes(t *testing.T) {
	cases := []struct {
		name, line string
		check      func(jsonrpc.Message) bool
	}{
		{"call with an integer id", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`, func(m jsonrpc.Message) bool {
			r, ok := m.(*jsonrpc.Request)
			return ok && r.ID.Raw() == int64(7) && r.Method == "tools/list" && string(r.Params) == `{}`
		}},
		{"call with a string id", `{"jsonrpc":"2.0","id":"a-1","method":"ping"}`, func(m jsonrpc.Message) bool {
			r, ok := m.(*jsonrpc.Request)
			return ok && r.ID.Raw() == "a-1"
		}},
		{"an id that says U+FFFD", `{"jsonrpc":"2.0","id":"\uFFFD-�","method":"ping"}`, func(m jsonrpc.Message) bool {
			r, ok := m.(*jsonrpc.Request)
			return ok && r.ID.Raw() == "\ufffd-\ufffd"
		}},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, func(m jsonrpc.Message) bool {
			r, ok := m.(*jsonrpc.Request)
			return ok && !r.IsCall() && r.Method == "notifications/initialized"
		}},
		{"result", `{"jsonrpc":"2.0","id":3,"result":{"ok":true}}`, func(m jsonrpc.Message) bool {
			r, ok := m.(*jsonrpc.Response)
			return ok && r.ID.Raw() == int64(3) && r.Error == nil && string(r.Result) == `{"ok":true}`
		}},
		{"error", `{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no"}}`, func(m jsonrpc.Message) bool {
			r, ok := m.(*jsonrpc.Response)
			we, isWire := r.Error.(*jsonrpc.Error)
			return ok && isWire && we.Code == -32601 && we.Message == "no"
		}},
		{"jsonrpc escaped", `{"jsonrpc":"2\u002e0","id":1,"method":"ping"}`, func(m jsonrpc.Message) bool {
			r, ok := m.(*jsonrpc.Request)
			return ok && r.Method == "ping"
		}},
		{"padded and CRLF", "  {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r", func(m jsonrpc.Message) bool {
			r, ok := m.(*jsonrpc.Request)
			return ok && r.Method == "ping"
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			c := connect(t, strings.NewReader(tc.line+"\n"), &out, 0)
			msg, err := c.Read(context.Background())
			if err != nil || !tc.check(msg) {
				t.Fatalf("Read = %#v, %v", msg, err)
			}
			if out.Len() != 0 {
				t.Fatalf("answered a valid message: %s", out.String())
			}
			if _, err := c.Read(context.Background()); err != io.EOF {
				t.Fatalf("after the last line: %v, want io.EOF", err)
			}
		})
	}
}

func TestLineTransportWrites(t *testing.T) {
	cases := []struct {
		name string
		msg  jsonrpc.Message
		want string
	}{
		{"bare notification", &jsonrpc.Request{Method: "notifications/tools/list_changed"},
			`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
		{"result", &jsonrpc.Response{ID: mustID(t, "p-1"), Result: json.RawMessage(`{}`)},
			`{"jsonrpc":"2.0","id":"p-1","result":{}}`},
		{"error without an id", &jsonrpc.Response{Error: &jsonrpc.Error{Code: -32600, Message: "request ID already in use"}},
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"request ID already in use"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			c := connect(t, strings.NewReader(""), &out, 0)
			if err := c.Write(context.Background(), tc.msg); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want+"\n" {
				t.Fatalf("wrote %q, want %q", out.String(), tc.want+"\n")
			}
		})
	}
}

func mustID(t *testing.T, v any) jsonrpc.ID {
	t.Helper()
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Close must unblock a Read waiting for input (the mcp.Connection contract).
func TestLineTransportCloseUnblocksRead(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	c := connect(t, inR, io.Discard, 0)
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		done <- err
	}()
	c.Close()
	if err := <-done; err != io.EOF {
		t.Fatalf("Read after Close = %v, want io.EOF", err)
	}
	if err := c.Write(context.Background(), &jsonrpc.Request{Method: "x"}); err == nil {
		t.Fatal("Write after Close succeeded")
	}
}

// FuzzLineConn: whatever arrives, Read hands on only valid messages and
// everything written back is a JSON-RPC error answer with id null, one per
// line, and the connection never fails on content.
func FuzzLineConn(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{oops`, `[1]`, `5`, `{"id":{},"method":"x"}`,
		`{"id":"a","result":{}}`, `{"method":null}`, "\n\n", `{"id":1e3,"method":"x"}`, `{"id":-7,"method":"x","params":[1]}`,
	} {
		f.Add(s + "\n" + s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var out bytes.Buffer
		c := connect(t, strings.NewReader(in), &out, 256)
		for {
			msg, err := c.Read(context.Background())
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("Read failed on content: %v", err)
			}
			switch m := msg.(type) {
			case *jsonrpc.Request:
			case *jsonrpc.Response:
				if !m.ID.IsValid() {
					t.Fatal("a response without an id")
				}
			default:
				t.Fatalf("unexpected %T", msg)
			}
		}
		for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if line == "" {
				continue
			}
			var a struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *jsonrpc.Error  `json:"error"`
			}
			if err := json.Unmarshal([]byte(line), &a); err != nil || a.JSONRPC != "2.0" || string(a.ID) != "null" || a.Error == nil || a.Error.Code == 0 {
				t.Fatalf("answer %q", line)
			}
		}
	})
}

// FuzzDecodeLine: a line scanned without reflection decodes to what
// encoding/json makes of it.
func FuzzDecodeLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,"<"]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a\"b"}}`,
		` { "id" : "é\u2028" , "result" : { } } `, `{"id":2,"error":{"code":-1,"message":"m"}}`, `{"id":2,"error":5}`,
		`{"ID":1,"method":"ping"}`, `{"id":1,"id":2,"method":"ping"}`, `{"id":1,"method":"ping","Method":"x"}`, `{"paramſ":1,"method":"m"}`,
		`{"m\u0065thod":"ping","id":1}`, `{"method":7,"id":1}`, `{"method":null,"id":1,"result":{}}`, `{"method":"a\u0000b"}`,
		"{\"method\":\"\xff\"}", `{"id":null,"method":"x"}`, `{"id":1.5,"method":"x"}`, `{"id":"x","params":null,"method":""}`,
		`{"a":{"b":[{"c":"}"}]},"method":"x"}`, `[]`, `{`, `{}`, `5`, `"x"`, `{"id":1,"method":"x"} {}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		b := bytes.TrimSpace([]byte(line))
		if len(b) == 0 {
			return
		}
		got, gotErr := decodeWith(b, true)
		want, wantErr := decodeWith(b, false)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotErr, wantErr) {
			t.Fatalf("line %q\n got %#v %v\nwant %#v %v", line, got, gotErr, want, wantErr)
		}
	})
}

// Lines of the usual shapes skip encoding/json's reflection (else
// FuzzDecodeLine would compare it with itself).
func TestScanLineTaken(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
	} {
		if _, ok := scanLine([]byte(line)); !ok {
			t.Errorf("%s was not scanned", line)
		}
	}
}
