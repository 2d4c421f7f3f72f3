package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// eofReader is input that ends after its lines, closing ended when the
// reader sees the end.
type eofReader struct {
	r     io.Reader
	once  sync.Once
	ended chan struct{}
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.once.Do(func() { close(e.ended) })
	}
	return n, err
}

// A client that writes its requests and closes its input at once
// (`printf '…' | hub mcp`) still gets every answer: calls read before the
// end are answered before the session ends, whether the SDK or the fast
// path runs them and however long after the end they finish.
func TestAnswersOutliveTheInput(t *testing.T) {
	in := &eofReader{ended: make(chan struct{})}
	finishAfterEnd := func(ctx context.Context) error {
		select {
		case <-in.ended: // the input is over; finish now
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s := testServer(Options{})
	s.AddTool(&mcp.Tool{Name: "late", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if err := finishAfterEnd(ctx); err != nil {
				return nil, err
			}
			return TextResult("late"), nil
		})
	fw := s.Forward(nil, func(ctx context.Context, _ string, _ json.RawMessage) (*mcp.CallToolResult, error) {
		if err := finishAfterEnd(ctx); err != nil {
			return nil, err
		}
		return TextResult("fast"), nil
	})
	fw.Sync(context.Background(), []*mcp.Tool{tool("fwd", "")})
	in.r = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"late"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fwd"}}`,
	}, "\n") + "\n")
	var out strings.Builder
	if _, err := s.Serve(context.Background(), &LineTransport{In: in, Out: &out}); err != nil {
		t.Fatal(err)
	}
	answered := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage
			Result json.RawMessage
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Result != nil {
			answered[string(m.ID)] = string(m.Result)
		}
	}
	for id, want := range map[string]string{"0": "serverInfo", "1": "{}", "2": `"late"`, "3": `"fast"`} {
		if !strings.Contains(answered[id], want) {
			t.Errorf("request %s: result %q, want it to contain %q\noutput:\n%s", id, answered[id], want, out.String())
		}
	}
}

// A call still running when the grace after the input's end runs out is
// cancelled, so a closed stdin still ends the session.
func TestDrainEndsAfterItsGrace(t *testing.T) {
	s := testServer(Options{})
	s.drainFor = 20 * time.Millisecond
	s.AddTool(&mcp.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	c := serveRaw(t, s)
	c.initialize("2025-06-18")
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}}`)
	if r := c.close(); r.err != nil || !r.announced {
		t.Fatalf("Serve = %+v", r)
	}
}

// A stateless client's subscriptions/listen stream never ends by itself:
// the input's end does not wait for it (it held every such session open
// for the whole grace, 5 s).
func TestDrainDoesNotWaitForListenStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + meta + `}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}` + "\n")
		var out strings.Builder
		start := time.Now()
		if _, err := testServer(Options{}).Serve(context.Background(), &LineTransport{In: in, Out: &out}); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited >= drainGrace {
			t.Fatalf("the session waited %v for a listen stream", waited)
		}
		if !strings.Contains(out.String(), `"id":2,"result"`) {
			t.Fatalf("tools/list not answered:\n%s", out.String())
		}
	})
}
