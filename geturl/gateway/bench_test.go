package gateway

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/kernel"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/internal/cputime"
)

// benchEnv is a served project: one 4 KiB file and eight 2 KiB ones.
func benchEnv(b *testing.B) (*env, *testSession) {
	dir := b.TempDir()
	line := strings.Repeat("x", 63) + "\n"
	os.WriteFile(filepath.Join(dir, "four.ts"), []byte(strings.Repeat(line, 64)), 0o644)
	for i := range 8 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.ts", i)), []byte(strings.Repeat(line, 32)), 0o644)
	}
	e := newEnv(b)
	s := newSession(b, dir, route.Permissions{Write: true, Terminal: true}, "A")
	e.table.Add(s)
	return e, s
}

// fetchLoop GETs url n times over one keep-alive connection, reading each
// body whole, and fails on anything but 200.
func fetchLoop(url string, n int) error {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	for range n {
		resp, err := c.Get(url)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			return fmt.Errorf("status %d: %v", resp.StatusCode, err)
		}
	}
	return nil
}

// benchInProcess measures a GET end to end over a real loopback socket.
// The client runs in this process, so cpu-µs/op counts both sides.
func benchInProcess(b *testing.B, url string) {
	if err := fetchLoop(url, 10); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	stop := cputime.Start(b)
	if err := fetchLoop(url, b.N); err != nil {
		b.Fatal(err)
	}
	stop()
}

func BenchmarkInit(b *testing.B) {
	e, s := benchEnv(b)
	benchInProcess(b, e.srv.URL+"/v0/init/"+s.Token(route.CapInit))
}

func BenchmarkReadOneFile4KiB(b *testing.B) {
	e, s := benchEnv(b)
	benchInProcess(b, e.srv.URL+"/v0/"+s.Token(route.CapRead)+"/r?path=four.ts")
}

func BenchmarkReadEightFiles(b *testing.B) {
	e, s := benchEnv(b)
	q := ""
	for i := range 8 {
		q += fmt.Sprintf("&path=f%d.ts", i)
	}
	benchInProcess(b, e.srv.URL+"/v0/"+s.Token(route.CapRead)+"/r?"+q[1:])
}

// BenchmarkReadOneFile4KiBServerCPU puts the client in a child process, so
// server-cpu-µs/op is the server's CPU alone (this process's user + system
// time, children excluded): the number the ≤ 100 µs target is about.
func BenchmarkReadOneFile4KiBServerCPU(b *testing.B) {
	e, s := benchEnv(b)
	benchServerCPU(b, e.srv.URL+"/v0/"+s.Token(route.CapRead)+"/r?path=four.ts")
}

// BenchmarkReadEightFilesServerCPU is /r of eight 2 KiB files, server CPU
// alone.
func BenchmarkReadEightFilesServerCPU(b *testing.B) {
	e, s := benchEnv(b)
	q := ""
	for i := range 8 {
		q += fmt.Sprintf("&path=f%d.ts", i)
	}
	benchServerCPU(b, e.srv.URL+"/v0/"+s.Token(route.CapRead)+"/r?"+q[1:])
}

// BenchmarkStaticAnswerServerCPU is the floor under the one above: the same
// server and client, a handler that writes a fixed answer of the same size
// (4.7 KB, Content-Length set, one Write). What it costs is net/http, the
// socket and the Go scheduler, none of which the gateway controls.
func BenchmarkStaticAnswerServerCPU(b *testing.B) {
	e, s := benchEnv(b)
	w := &discardWriter{h: http.Header{}}
	e.gw.ServeHTTP(w, httptestRequest(e, "/v0/"+s.Token(route.CapRead)+"/r?path=four.ts"))
	body := bytes.Repeat([]byte("x"), w.n)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		write(w, http.StatusOK, ctypeJSON, body)
	}))
	b.Cleanup(srv.Close)
	benchServerCPU(b, srv.URL+"/")
}

// benchServerCPU GETs url b.N times from a child process over one
// keep-alive connection and reports this process's CPU per request (and
// its allocations: the server's alone, as the client is elsewhere).
func benchServerCPU(b *testing.B, url string) {
	b.ReportAllocs()
	run := func(n int) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestBenchClientProcess$")
		cmd.Env = append(os.Environ(), "GETURL_BENCH_URL="+url, "GETURL_BENCH_N="+strconv.Itoa(n), "GOMAXPROCS=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("client: %v\n%s", err, out)
		}
	}
	run(10)
	b.ResetTimer()
	before := cputime.Self()
	run(b.N)
	d := cputime.Self() - before
	b.StopTimer()
	b.ReportMetric(float64(d.Nanoseconds())/1e3/float64(b.N), "server-cpu-µs/op")
	b.ReportMetric(cputime.PeakRSSMiB(), "server-peak-rss-MiB")
}

// TestBenchClientProcess is the child side of the server-CPU benchmark.
func TestBenchClientProcess(t *testing.T) {
	url := os.Getenv("GETURL_BENCH_URL")
	if url == "" {
		t.Skip("only runs as a benchmark's client process")
	}
	n, _ := strconv.Atoi(os.Getenv("GETURL_BENCH_N"))
	if err := fetchLoop(url, n); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkReadOneFile4KiBHandler calls the handler directly (no sockets,
// no net/http server): the gateway's and the kernel's own share.
func BenchmarkReadOneFile4KiBHandler(b *testing.B) {
	e, s := benchEnv(b)
	req := httptestRequest(e, "/v0/"+s.Token(route.CapRead)+"/r?path=four.ts")
	b.ReportAllocs()
	stop := cputime.Start(b)
	for range b.N {
		w := &discardWriter{h: http.Header{}}
		e.gw.ServeHTTP(w, req)
		if w.status != 200 {
			b.Fatal(w.status)
		}
	}
	stop()
}

func httptestRequest(e *env, target string) *http.Request {
	r, _ := http.NewRequest("GET", "http://"+e.srv.Listener.Addr().String()+target, nil)
	r.RequestURI = target
	return r
}

type discardWriter struct {
	h      http.Header
	status int
	n      int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }
func (d *discardWriter) WriteHeader(s int)           { d.status = s }

// tree10k writes 10,000 small source files in 100 directories; every 50th
// file mentions the needle.
func tree10k(b *testing.B) string {
	dir := b.TempDir()
	for d := range 100 {
		sub := filepath.Join(dir, "pkg", fmt.Sprintf("d%03d", d))
		os.MkdirAll(sub, 0o755)
		for f := range 100 {
			n := d*100 + f
			body := fmt.Sprintf("package d%03d\n\n// file %d\nfunc F%d() int { return %d }\n", d, n, n, n)
			if n%50 == 0 {
				body += "// NEEDLE: look here\n"
			}
			os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d.go", f)), []byte(body), 0o644)
		}
	}
	return dir
}

// BenchmarkGrep10kFiles is /g over 10k files through the gateway, with rg
// (its CPU counted: rg is a waited-for child) and with the Go engine. The
// client is in this process.
func BenchmarkGrep10kFiles(b *testing.B) {
	dir := tree10k(b)
	for _, c := range []struct {
		name string
		noRG bool
	}{{"rg", false}, {"go", true}} {
		b.Run(c.name, func(b *testing.B) {
			e := newEnvWith(b, kernel.Options{NoRG: c.noRG})
			s := newSession(b, dir, route.Permissions{}, "A")
			e.table.Add(s)
			benchInProcess(b, e.srv.URL+"/v0/"+s.Token(route.CapRead)+"/g?path=pkg&raw=NEEDLE")
		})
	}
}

// BenchmarkReadLongRoute is BenchmarkReadOneFile4KiB through /read: the
// long name costs one failed map lookup and a scan of the table.
func BenchmarkReadLongRoute(b *testing.B) {
	e, s := benchEnv(b)
	benchInProcess(b, e.srv.URL+"/v0/"+s.Token(route.CapRead)+"/read?path=four.ts")
}

// BenchmarkReadContentCall is the same read through /call content=: the
// strict decoder and a second bind on top.
func BenchmarkReadContentCall(b *testing.B) {
	e, s := benchEnv(b)
	benchInProcess(b, e.srv.URL+"/v0/"+s.Token(route.CapRead)+"/call?tool=read&content=eyJwYXRoIjoiZm91ci50cyJ9")
}

// BenchmarkInitHandler is Init through the handler alone (no socket, no
// net/http server): what the gateway itself costs and allocates per Init.
func BenchmarkInitHandler(b *testing.B) {
	e, s := benchEnv(b)
	req := httptestRequest(e, "/v0/init/"+s.Token(route.CapInit))
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for range b.N {
		clear(w.h)
		e.gw.ServeHTTP(w, req)
		if w.status != 200 {
			b.Fatal(w.status)
		}
	}
}

// BenchmarkInitServerCPU is Init with the client in a child process:
// server-cpu-µs/op is the server's CPU alone.
func BenchmarkInitServerCPU(b *testing.B) {
	e, s := benchEnv(b)
	benchServerCPU(b, e.srv.URL+"/v0/init/"+s.Token(route.CapInit))
}

// BenchmarkInitServerCPUHub is BenchmarkInitServerCPU behind the server the
// hub runs the data plane with (hub.ServeHTTP: its connection limit,
// header timeout and body pacing), not httptest's bare one.
func BenchmarkInitServerCPUHub(b *testing.B) {
	e, s := benchEnv(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	gw := New(Options{Sessions: e.table, Kernel: e.k, Port: ln.Addr().(*net.TCPAddr).Port})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- hub.ServeHTTP(ctx, ln, gw, nil, slog.New(slog.DiscardHandler)) }()
	b.Cleanup(func() { cancel(); <-done })
	benchServerCPU(b, "http://"+ln.Addr().String()+"/v0/init/"+s.Token(route.CapInit))
}

// BenchmarkInitRawServerCPU is the floor under BenchmarkInitServerCPU
// without net/http: the same client and the same Init answer (status line,
// headers and body as the gateway sends them), written by a loop that only
// finds each request's end and answers it on the goroutine that read it —
// no header parsing, limits, timeouts or background read. The difference
// between the two is what a leaner server on the data plane could save.
func BenchmarkInitRawServerCPU(b *testing.B) {
	e, s := benchEnv(b)
	w := &discardWriter{h: http.Header{}}
	var body bytes.Buffer
	e.gw.ServeHTTP(&teeWriter{discardWriter: w, buf: &body}, httptestRequest(e, "/v0/init/"+s.Token(route.CapInit)))
	resp := []byte("HTTP/1.1 200 OK\r\nCache-Control: no-store\r\nContent-Length: " + strconv.Itoa(body.Len()) +
		"\r\nContent-Type: application/json\r\nDate: Wed, 02 Dec 2026 16:00:00 GMT\r\nX-Content-Type-Options: nosniff\r\n\r\n" + body.String())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				have := 0
				for {
					n, err := c.Read(buf[have:])
					if err != nil {
						return
					}
					have += n
					if i := bytes.Index(buf[:have], []byte("\r\n\r\n")); i >= 0 {
						have = copy(buf, buf[i+4:have])
						if _, err := c.Write(resp); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	benchServerCPU(b, "http://"+ln.Addr().String()+"/v0/init/"+s.Token(route.CapInit))
}

type teeWriter struct {
	*discardWriter
	buf *bytes.Buffer
}

func (t *teeWriter) Write(p []byte) (int, error) { t.buf.Write(p); return t.discardWriter.Write(p) }
