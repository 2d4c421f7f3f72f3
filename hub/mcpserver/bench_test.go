package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/hubdev/hub/internal/cputime"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkForwardedCall is the MCP layer's own share of a tools/call: a
// forwarded tool that answers at once, over the stdio framing through
// pipes, so nothing but this package and the SDK is in the path. It
// reports CPU per call (user+system, getrusage) besides ns/op.
func BenchmarkForwardedCall(b *testing.B) {
	s := New(Options{Name: "bench", Version: "1"})
	fw := s.Forward(Prefix("p_"), func(context.Context, string, json.RawMessage) (*mcp.CallToolResult, error) {
		return TextResult(`{"ok":true,"say":"ok","objects":3}`), nil
	})
	fw.Sync(context.Background(), []*mcp.Tool{{Name: "scene.describe", InputSchema: json.RawMessage(`{"type":"object"}`)}})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Serve(context.Background(), &LineTransport{In: inR, Out: outW})
		outW.Close()
	}()
	b.Cleanup(func() { inW.Close(); <-done })
	lines := bufio.NewReader(outR)
	call := func(msg string) []byte {
		io.WriteString(inW, msg)
		line, err := lines.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		return line
	}
	call(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}` + "\n")
	const msg = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"p_scene_describe","arguments":{"limit":5}}}` + "\n"
	before := cputime.Self()
	for b.Loop() {
		if line := call(msg); !bytes.Contains(line, []byte(`"isError":false`)) {
			b.Fatalf("answer %s", line)
		}
	}
	cpu := cputime.Self() - before
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/call")
}
