package hubmcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/mcpserver"
	"github.com/hubdev/hub/internal/cputime"
	"github.com/hubdev/hub/registry"
	"github.com/hubdev/hub/stitchslop"
)

// BenchmarkToolsCall measures what an agent pays for one call to a Stitch
// Slop page, end to end over real loopback sockets, two ways:
//
//   - control: POST /call on the hub's bridge, what a shell client does,
//     over a keep-alive connection;
//   - hub-mcp: tools/call to `hub mcp` (Run, over the newline-delimited
//     stdio framing), which makes that same POST /call.
//
// Both run against one in-process hub (supervisor and real adapters) with a
// page that answers at once over a real WebSocket; each client does the
// least it can (send prepared bytes, check the answer's ok). Besides
// ns/op it reports the process's CPU time per call (user+system, from
// getrusage), which counts every side: client, hub mcp, bridge and page.
//
// The third, interleaved, runs the two in alternating blocks and reports
// each one's CPU per call and their ratio (issue 14 asks hub-mcp ≤ 1.5 ×
// control): on a machine loaded by other work, load that comes and goes
// then weighs on both alike, where two runs one after the other can each
// meet a different load.
func BenchmarkToolsCall(b *testing.B) {
	dirs := adaptertest.TempDirs(b)
	h := startHub(b, dirs, hubConfig(b, "stitchslop"))
	h.ssPage("scene.describe")
	port := h.port("stitchslop")
	cases := []struct {
		name string
		call func(b *testing.B) func() error
	}{
		{"control", func(b *testing.B) func() error { return controlCaller(b, dirs.Home, port) }},
		{"hub-mcp", func(b *testing.B) func() error { return mcpCaller(b, dirs) }},
	}
	b.Run("interleaved", func(b *testing.B) {
		calls := [2]func() error{cases[0].call(b), cases[1].call(b)}
		for range 50 {
			for _, call := range calls {
				if err := call(); err != nil {
					b.Fatal(err)
				}
			}
		}
		const block = 20
		var cpu [2]time.Duration
		i := 0
		for b.Loop() {
			// Each path goes first every other time.
			for _, k := range [2]int{i % 2, 1 - i%2} {
				before := cputime.Self()
				for range block {
					if err := calls[k](); err != nil {
						b.Fatal(err)
					}
				}
				cpu[k] += cputime.Self() - before
			}
			i++
		}
		per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(b.N*block) }
		b.ReportMetric(per(cpu[0]), "control-cpu-µs/call")
		b.ReportMetric(per(cpu[1]), "hub-mcp-cpu-µs/call")
		b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "ratio")
	})
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			call := tc.call(b)
			for range 50 { // warm connections and caches
				if err := call(); err != nil {
					b.Fatal(err)
				}
			}
			var lat []time.Duration
			before := cputime.Self()
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				if err := call(); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			b.ReportMetric(float64((cputime.Self()-before).Microseconds())/float64(b.N), "cpu-µs/call")
			b.ReportMetric(cputime.PeakRSSMiB(), "peak-rss-MiB")
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// controlCaller posts scene.describe to the bridge's control plane.
func controlCaller(b *testing.B, home string, port int) func() error {
	var sess struct {
		Key string `json:"key"`
	}
	raw, err := os.ReadFile(filepath.Join(hub.ExpandHome(stitchslop.DefaultConfigDir, home), "session-"+strconv.Itoa(port)+".json"))
	if err == nil {
		err = json.Unmarshal(raw, &sess)
	}
	if err != nil {
		b.Fatal(err)
	}
	key := sess.Key
	hc := &http.Client{}
	b.Cleanup(hc.CloseIdleConnections)
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/call"
	body := []byte(`{"command":"scene.describe","args":{"limit":5}}`)
	var buf bytes.Buffer
	return func() error {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set(stitchslop.KeyHeader, key)
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		buf.Reset()
		buf.ReadFrom(resp.Body)
		resp.Body.Close()
		if !bytes.Contains(buf.Bytes(), []byte(`"ok":true`)) {
			return fmt.Errorf("answer %s", buf.Bytes())
		}
		return nil
	}
}

// mcpCaller runs hub mcp over pipes and calls stitchslop_scene_describe.
func mcpCaller(b *testing.B, dirs hub.Dirs) func() error {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, &mcpserver.LineTransport{In: inR, Out: outW}, Options{Dirs: dirs, Log: adaptertest.Logger(b), Retry: 20 * time.Millisecond,
			Registry: registry.New()})
		outW.Close()
	}()
	b.Cleanup(func() { inW.Close(); cancel(); <-done })
	lines := bufio.NewReaderSize(outR, 64<<10)
	// The answer to id is the next line that carries it (a list_changed
	// may come first).
	roundTrip := func(msg []byte, id []byte) ([]byte, error) {
		if _, err := inW.Write(msg); err != nil {
			return nil, err
		}
		for {
			line, err := lines.ReadSlice('\n')
			if err != nil {
				return nil, err
			}
			if bytes.Contains(line, id) {
				return line, nil
			}
		}
	}
	if _, err := roundTrip([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`+"\n"), []byte(`"id":0,`)); err != nil {
		b.Fatal(err)
	}
	inW.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	// Until hub mcp has followed the bridge, the tool is not there yet.
	adaptertest.WaitFor(b, "the page's tool", func() bool {
		line, err := roundTrip([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n"), []byte(`"id":1,`))
		return err == nil && bytes.Contains(line, []byte(`"stitchslop_scene_describe"`))
	})
	const msg = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stitchslop_scene_describe","arguments":{"limit":5}}}` + "\n"
	id := []byte(`"id":2,`)
	return func() error {
		line, err := roundTrip([]byte(msg), id)
		if err != nil {
			return err
		}
		if !bytes.Contains(line, []byte(`"isError":false`)) {
			return fmt.Errorf("answer %s", line)
		}
		return nil
	}
}
