package stitchslop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub/mcpserver"
)

// BenchmarkRoundTrip measures agent → page → agent through the control
// plane (POST /call), through MCP tools/call (the SDK client over the
// in-memory transport, and the stdio line transport), and as geturl's
// plugin=stitchslop calls it: the in-process ToolBridge, and RemoteBridge
// (a bridge in another process, through its control plane), at
// concurrency 1 and 16, with a page that answers every command at once
// over a real loopback WebSocket. Both ends run in this process, so the
// CPU per call is the round trip's whole cost. bare-relay is the floor:
// the same HTTP client and scripted page through startBareRelay, a relay
// with nothing but id matching (no auth, limits, agents or logging).
func BenchmarkRoundTrip(b *testing.B) {
	for _, face := range []string{"bare-relay", "control", "mcp", "mcp-stdio", "bridge", "remote-bridge"} {
		for _, conc := range []int{1, 16} {
			b.Run(face+"/c"+itoa(conc), func(b *testing.B) {
				var br *bridge
				var p *page
				var relayURL string
				if face == "bare-relay" {
					relayURL, p = startBareRelay(b)
				} else {
					br = startBridge(b, nil)
					p, _ = br.attach(map[string]any{"token": testToken})
					// A real tab announces its tools: the MCP faces forward
					// them, and only a forwarded tool takes their fast path.
					p.send(map[string]any{"tools": []map[string]any{{"name": "scene.describe"}}})
					adaptertest.WaitFor(b, "the tab's tools", func() bool { ts, _ := br.S.Tools(); return len(ts) == 1 })
				}
				p.serve(func(cmd string, _ map[string]any) map[string]any {
					return map[string]any{"ok": true, "say": "ok", "objects": 3}
				})
				var call func() error
				switch face {
				case "control", "bare-relay":
					hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
					b.Cleanup(hc.CloseIdleConnections)
					url, key := relayURL, ""
					if br != nil {
						url, key = br.URL("/call"), br.S.Key()
					}
					body := []byte(`{"command":"scene.describe","args":{"limit":5}}`)
					call = func() error {
						req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
						req.Header.Set(KeyHeader, key)
						resp, err := hc.Do(req)
						if err != nil {
							return err
						}
						var buf bytes.Buffer
						buf.ReadFrom(resp.Body)
						resp.Body.Close()
						if !bytes.Contains(buf.Bytes(), []byte(`"ok":true`)) {
							b.Errorf("answer %s", buf.Bytes())
						}
						return nil
					}
				case "mcp":
					cs := connectSDKBench(b, br)
					call = func() error {
						res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "scene.describe", Arguments: map[string]any{"limit": 5}})
						if err == nil && res.IsError {
							b.Errorf("isError result")
						}
						return err
					}
				case "mcp-stdio":
					call = stdioCaller(b, br)
				case "bridge", "remote-bridge":
					var tb adapters.ToolBridge = br.S
					if face == "remote-bridge" {
						rb := NewRemoteBridge(br.configDir(), br.Port())
						b.Cleanup(rb.Close)
						tb = rb
					}
					args := json.RawMessage(`{"limit":5}`)
					call = func() error {
						_, err := tb.BridgeCall(context.Background(), "scene.describe", args)
						return err
					}
				}
				lat := make([]time.Duration, b.N)
				var next atomic.Int64
				measured := adaptertest.MeasureProcess(b)
				start := time.Now()
				var wg sync.WaitGroup
				for range conc {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							i := next.Add(1) - 1
							if i >= int64(b.N) {
								return
							}
							t0 := time.Now()
							if err := call(); err != nil {
								b.Error(err)
								return
							}
							lat[i] = time.Since(t0)
						}
					}()
				}
				wg.Wait()
				elapsed := time.Since(start)
				measured()
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[(len(lat)*99)/100].Microseconds()), "p99-µs")
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
			})
		}
	}
}

// stdioCaller drives ServeMCP over newline-delimited pipes, as a real MCP
// client does over stdio, matching answers to callers by id.
func stdioCaller(b *testing.B, br *bridge) func() error {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		br.S.ServeMCP(context.Background(), &mcpserver.LineTransport{In: inR, Out: outW}, nil)
		outW.Close()
	}()
	var mu sync.Mutex
	waiting := map[int64]chan []byte{}
	go func() {
		lines := bufio.NewReader(outR)
		for {
			line, err := lines.ReadBytes('\n')
			if err != nil {
				return
			}
			var m struct {
				ID *int64 `json:"id"`
			}
			if json.Unmarshal(line, &m) != nil || m.ID == nil {
				continue
			}
			mu.Lock()
			ch := waiting[*m.ID]
			delete(waiting, *m.ID)
			mu.Unlock()
			if ch != nil {
				ch <- append([]byte(nil), line...)
			}
		}
	}()
	b.Cleanup(func() { inW.Close(); <-done })
	// A real client initializes first; the SDK refuses calls before that.
	initDone := make(chan []byte, 1)
	mu.Lock()
	waiting[0] = initDone
	mu.Unlock()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`+"\n")
	<-initDone
	var wmu sync.Mutex
	var ids atomic.Int64
	return func() error {
		id := ids.Add(1)
		ch := make(chan []byte, 1)
		mu.Lock()
		waiting[id] = ch
		mu.Unlock()
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"scene.describe","arguments":{"limit":5}}}`+"\n", id)
		wmu.Lock()
		_, err := io.WriteString(inW, msg)
		wmu.Unlock()
		if err != nil {
			return err
		}
		if r := <-ch; !bytes.Contains(r, []byte(`"isError":false`)) {
			return fmt.Errorf("answer %s", r)
		}
		return nil
	}
}

// connectSDKBench is connectSDK for benchmarks.
func connectSDKBench(b *testing.B, br *bridge) *mcp.ClientSession {
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := st.Connect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		br.S.ServeMCP(ctx, sdkConn{conn}, nil)
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cs.Close()
		conn.Close()
		cancel()
		<-done
	})
	return cs
}
