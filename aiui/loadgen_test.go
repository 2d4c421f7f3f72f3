package aiui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lxzan/gws"

	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/hub/portowner/portownertest"
	"github.com/hubdev/hub/internal/cputime"
)

// The benchmarks' client load runs in a child process (this test binary,
// re-executed with loadgenEnv set), so the benchmark process's rusage and
// peak RSS are the server's alone, as the issue measured them.
const loadgenEnv = "AIUI_BENCH_LOADGEN"

func TestMain(m *testing.M) {
	portownertest.Main() // a listener of another user's (portheld_test.go)
	if spec := os.Getenv(loadgenEnv); spec != "" {
		os.Exit(runLoadgen(spec))
	}
	if home := os.Getenv(restartEnv); home != "" {
		os.Exit(runRestarted(home))
	}
	os.Exit(m.Run())
}

// loadSpec is the load shape of issue 13: per connection, text-concat
// threads of framesPerThread data frames of frameBytes `{"text":…}`
// payload, fin on the last, at most window frames un-acked.
type loadSpec struct {
	URL             string `json:"url"`
	Conns           int    `json:"conns"`
	FrameBytes      int    `json:"frameBytes"`
	FramesPerThread int    `json:"framesPerThread"`
	Window          int    `json:"window"`
	Format          string `json:"format"`
	// FacePort/FaceKey attach one face (a control-plane event stream
	// consumer) that reads every prompt routed to it.
	FacePort int    `json:"facePort,omitempty"`
	FaceKey  string `json:"faceKey,omitempty"`
}

// textPayload is a frameBytes-long `{"text":…}` payload of prose with an
// escaped newline every line, so the server's JSON path sees escapes as a
// real prompt has them.
func textPayload(frameBytes int) []byte {
	const line = `The quick brown fox jumps over the lazy dog; make the baseline amber.\n`
	n := frameBytes - len(`{"text":""}`)
	var b bytes.Buffer
	b.Grow(frameBytes)
	b.WriteString(`{"text":"`)
	for b.Len()-9 < n {
		b.WriteString(line)
	}
	content := b.Bytes()[9 : 9+n]
	for len(content) > 0 && (content[len(content)-1] == '\\' || content[len(content)-1] == 'n') {
		content[len(content)-1] = '.' // never end on a cut escape
	}
	out := append(b.Bytes()[:9+n], `"}`...)
	return out
}

// genConn is one load connection.
type genConn struct {
	c      *gws.Conn
	acks   chan bool
	frames [2][]byte // data, data+fin; threadId digits patched per thread
	idAt   [2]int
	thread int
}

func (g *genConn) OnOpen(*gws.Conn)             {}
func (g *genConn) OnClose(*gws.Conn, error)     { close(g.acks) }
func (g *genConn) OnPing(c *gws.Conn, p []byte) { c.WritePong(p) }
func (g *genConn) OnPong(*gws.Conn, []byte)     {}
func (g *genConn) OnMessage(_ *gws.Conn, m *gws.Message) {
	ok := bytes.HasPrefix(m.Bytes(), []byte(`{"ok":true`))
	m.Close()
	g.acks <- ok
}

const threadDigits = "000000000"

func newGenConn(spec loadSpec, i int) (*genConn, error) {
	g := &genConn{acks: make(chan bool, spec.Window+4)}
	payload := textPayload(spec.FrameBytes)
	id := fmt.Sprintf("c%02dt%s", i, threadDigits)
	for k, fin := range []bool{false, true} {
		f, err := frame.Encode(frame.Envelope{V: 1, Kind: "data", ThreadID: id, Fin: fin}, payload)
		if err != nil {
			return nil, err
		}
		g.frames[k], g.idAt[k] = f, bytes.Index(f, []byte(id))+len(id)-len(threadDigits)
	}
	c, _, err := gws.NewClient(g, &gws.ClientOption{Addr: spec.URL, ReadMaxPayloadSize: 1 << 20, WriteMaxPayloadSize: 64 << 20})
	if err != nil {
		return nil, err
	}
	g.c = c
	go c.ReadLoop()
	hello, _ := frame.Encode(frame.Envelope{V: 1, Kind: "hello", Format: spec.Format}, nil)
	if err := c.WriteMessage(gws.OpcodeBinary, hello); err != nil {
		return nil, err
	}
	if !<-g.acks {
		return nil, fmt.Errorf("hello refused")
	}
	return g, nil
}

// run sends threads whole threads with at most window frames un-acked.
func (g *genConn) run(spec loadSpec, threads int) error {
	total := threads * spec.FramesPerThread
	sent, acked := 0, 0
	for acked < total {
		for sent < total && sent-acked < spec.Window {
			k := 0
			if sent%spec.FramesPerThread == spec.FramesPerThread-1 {
				k = 1
			}
			if sent%spec.FramesPerThread == 0 {
				g.thread++
				for j := range g.frames {
					copy(g.frames[j][g.idAt[j]:], fmt.Sprintf("%09d", g.thread))
				}
			}
			if err := g.c.WriteMessage(gws.OpcodeBinary, g.frames[k]); err != nil {
				return err
			}
			sent++
		}
		ok, open := <-g.acks
		if !open {
			return fmt.Errorf("connection closed")
		}
		if !ok {
			return fmt.Errorf("a frame was refused")
		}
		acked++
	}
	return nil
}

// runLoadgen is the child: connect, say "ready", then for each "go N"
// line send N threads per connection and answer "done <bytes>".
func runLoadgen(specJSON string) int {
	var spec loadSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Println("error", err)
		return 1
	}
	conns := make([]*genConn, spec.Conns)
	for i := range conns {
		g, err := newGenConn(spec, i)
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		conns[i] = g
	}
	var seen atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if spec.FacePort != 0 {
		// the face reads its event stream line by line without decoding
		// the prompts (an agent's JSON decoding is the client's cost, and
		// on two cores it would starve the server under test)
		cl := NewClient(spec.FacePort, spec.FaceKey)
		cl.Face = "bench-face"
		go cl.openStream(ctx, "/control/events?id=bench-face", func(line []byte) error {
			if bytes.HasPrefix(line, []byte(`{"type":"prompt"`)) {
				seen.Add(1)
			}
			return nil
		})
	}
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if want, ok := strings.CutPrefix(in.Text(), "seen "); ok {
			// the server wrote them all; let the last ones arrive
			n, _ := strconv.ParseInt(want, 10, 64)
			for deadline := time.Now().Add(10 * time.Second); seen.Load() < n && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			fmt.Println("seen", seen.Load())
			continue
		}
		threads, _ := strconv.Atoi(strings.TrimPrefix(in.Text(), "go "))
		var wg sync.WaitGroup
		errs := make(chan error, len(conns))
		for _, g := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := g.run(spec, threads); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		select {
		case err := <-errs:
			fmt.Println("error", err)
			return 1
		default:
		}
		fmt.Println("done", threads*len(conns)*spec.FramesPerThread*spec.FrameBytes)
	}
	return 0
}

// loadgen is the parent's handle on a running child.
type loadgen struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startLoadgen(b *testing.B, spec loadSpec) *loadgen {
	b.Helper()
	js, _ := json.Marshal(spec)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), loadgenEnv+"="+string(js))
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	outp, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	g := &loadgen{cmd: cmd, in: in, out: bufio.NewScanner(outp)}
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	if line := g.line(b); line != "ready" {
		b.Fatalf("load generator: %s", line)
	}
	return g
}

func (g *loadgen) line(b *testing.B) string {
	if !g.out.Scan() {
		b.Fatalf("load generator exited: %v", g.out.Err())
	}
	return g.out.Text()
}

// measured is one run's server-side cost.
type measured struct {
	bytes   int64
	elapsed time.Duration
	cpu     time.Duration // user+sys of this (server) process
	peakRSS int64         // VmHWM since the run started
}

// run sends threads threads per connection and measures the server
// until every frame is acked and then until drained() (the server's
// share of a face's work belongs in the window).
func (g *loadgen) run(b *testing.B, threads int, drained func() bool) measured {
	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS()
	cpu0 := cputime.Self()
	b.ResetTimer()
	t0 := time.Now()
	fmt.Fprintf(g.in, "go %d\n", threads)
	line := g.line(b)
	for drained != nil && !drained() {
		time.Sleep(100 * time.Microsecond)
	}
	el := time.Since(t0)
	b.StopTimer()
	m := measured{elapsed: el, cpu: cputime.Self() - cpu0, peakRSS: peakRSS()}
	n, err := strconv.ParseInt(strings.TrimPrefix(line, "done "), 10, 64)
	if err != nil {
		b.Fatalf("load generator: %s", line)
	}
	m.bytes = n
	return m
}

// seen is how many prompts the child's face has read, once it read want
// or stopped getting more.
func (g *loadgen) seen(b *testing.B, want int) int {
	fmt.Fprintln(g.in, "seen", want)
	n, err := strconv.Atoi(strings.TrimPrefix(g.line(b), "seen "))
	if err != nil {
		b.Fatal(err)
	}
	return n
}

func (m measured) report(b *testing.B) {
	mib := float64(m.bytes) / (1 << 20)
	b.ReportMetric(mib/m.elapsed.Seconds(), "MiB/s")
	b.ReportMetric(float64(m.cpu.Microseconds())/1000/mib, "cpu-ms/MiB")
	b.ReportMetric(float64(m.peakRSS)/(1<<20), "peak-RSS-MiB")
}

// resetPeakRSS resets VmHWM (Linux ≥ 4.0), so each run reports its own
// peak rather than the process's lifetime one.
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS is VmHWM in bytes (ru_maxrss when /proc is unavailable).
func peakRSS() int64 {
	if v := procStatusKiB("VmHWM:"); v > 0 {
		return v << 10
	}
	return int64(cputime.PeakRSSMiB() * (1 << 20))
}

func procStatusKiB(field string) int64 {
	data, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, field); ok {
			v, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return v
		}
	}
	return 0
}
