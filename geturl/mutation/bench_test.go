package mutation_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/engine/intents"
	"github.com/hubdev/hub/geturl/engine/terminal"
	"github.com/hubdev/hub/geturl/internal/benchdata"
	"github.com/hubdev/hub/geturl/mutation"
	"github.com/hubdev/hub/geturl/transport"
	"github.com/hubdev/hub/internal/cputime"
)

// The benchmarks drive the whole path an agent uses: real GET URLs over a
// loopback socket into the gateway, strict binding, the journal, the file
// engine with its atomic, fsynced writes on real files, and the answer.
// The client runs in a child process, so server-cpu-µs/op is the server's
// CPU alone (this process's user + system time): the gateway, the kernel,
// the journal and the detached execution.

func benchTree() map[string]string {
	tree := map[string]string{}
	for f := range 5 {
		tree[fmt.Sprintf("src/file%d.go", f)] = benchdata.Source(f, 32)
	}
	return tree
}

// serverCPU fetches, from a child process, urls(i) for warm-up and then
// for i in 0..b.N-1, in order, each answer required to be ok and finished,
// and reports this process's CPU per iteration.
func serverCPU(b *testing.B, urls func(i int) []string) { serverCPUWith(b, urls, false) }

// serverCPUWith is serverCPU; with commands it also reports the CPU of the
// processes the server ran and waited for (shell-cpu-µs/op: its waited-for
// children's CPU less the client's).
func serverCPUWith(b *testing.B, urls func(i int) []string, commands bool) {
	b.Helper()
	var getsPerOp float64
	write := func(from, n int) string {
		p := filepath.Join(b.TempDir(), "urls")
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriter(f)
		gets := 0
		for i := from; i < from+n; i++ {
			for _, u := range urls(i) {
				w.WriteString(u + "\n")
				gets++
			}
		}
		w.Flush()
		f.Close()
		getsPerOp = float64(gets) / float64(n)
		return p
	}
	var clientCPU time.Duration
	run := func(file string) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestBenchClientProcess$")
		cmd.Env = append(os.Environ(), "GETURL_BENCH_URLS="+file, "GOMAXPROCS=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("client: %v\n%s", err, out)
		}
		clientCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	run(write(1<<30, 4)) // warm-up (an even count: iterations alternate), identities of their own
	file := write(0, b.N)
	b.ResetTimer()
	before, kids := cputime.Self(), cputime.Children()
	run(file)
	d := cputime.Self() - before
	b.StopTimer()
	b.ReportMetric(float64(d.Nanoseconds())/1e3/float64(b.N), "server-cpu-µs/op")
	b.ReportMetric(cputime.PeakRSSMiB(), "server-peak-rss-MiB")
	if commands {
		shells := cputime.Children() - kids - clientCPU
		b.ReportMetric(float64(shells.Nanoseconds())/1e3/float64(b.N), "shell-cpu-µs/op")
	}
	b.ReportMetric(getsPerOp, "GETs/op")
}

// TestBenchClientProcess is the benchmarks' client: it fetches every URL
// of the file named by GETURL_BENCH_URLS over one keep-alive connection
// and fails on any answer that is not ok or not finished.
func TestBenchClientProcess(t *testing.T) {
	file := os.Getenv("GETURL_BENCH_URLS")
	if file == "" {
		t.Skip("only runs as a benchmark's client process")
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	get := func(u string) string {
		parts := strings.SplitN(u, "/", 4) // http: "" host path?query
		req, _ := http.NewRequest("GET", "http://"+parts[2]+"/", nil)
		req.URL = &url.URL{Scheme: "http", Host: parts[2], Opaque: "/" + parts[3]} // exactly as written
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(string(body), `{"ok":true`) {
			t.Fatalf("%s: %d %s", u, resp.StatusCode, body)
		}
		return string(body)
	}
	for sc.Scan() {
		body := get(sc.Text())
		// A slow disk can outlast wait=: follow the poll URL, as an agent would.
		for strings.Contains(body, `"state":"pending"`) || strings.Contains(body, `"state":"running"`) {
			var a struct{ Poll string }
			json.Unmarshal([]byte(body), &a)
			body = get(a.Poll)
		}
	}
}

// BenchmarkJournaledEditRoundTrip is one /e through the gateway: bind,
// resolve, journal (identity over path, old, new, run), the detached
// execution (read ~10 KiB, find the unique old text, temp file + fsync +
// rename + directory fsync), wait=1500 until it finished, the record.
func BenchmarkJournaledEditRoundTrip(b *testing.B) {
	e := newEnv(b, rw, benchTree())
	pairs := [2][2]string{{`"done 17"`, `"finished 17"`}, {`"finished 17"`, `"done 17"`}}
	serverCPU(b, func(i int) []string {
		p := pairs[i%2]
		return []string{e.m + "/e?path=src/file0.go&old=" + transport.Encode(p[0]) + "&new=" + transport.Encode(p[1]) + "&run=" + strconv.Itoa(i) + "&wait=1500"}
	})
}

// BenchmarkApplyPatch20Hunks5Files is one /a of 20 hunks over 5 real
// ~10 KiB files through the gateway: the patch in the raw tail, parsed and
// preflighted whole, committed with rollback capability (hard-link
// backups, temp file + fsync + rename per file, directory fsync).
func BenchmarkApplyPatch20Hunks5Files(b *testing.B) {
	e := newEnv(b, rw, benchTree())
	// Spaces as + (what URL readers send anyway) keep the tail short.
	enc := func(s string) string { return strings.ReplaceAll(transport.Encode(s), "%20", "+") }
	patches := [2]string{enc(benchdata.Patch(false)), enc(benchdata.Patch(true))}
	if len(patches[0]) > transport.MaxRaw {
		b.Fatalf("the patch is %d bytes as written, over the raw limit", len(patches[0]))
	}
	serverCPU(b, func(i int) []string {
		return []string{e.m + "/a?run=" + strconv.Itoa(i) + "&wait=1500&raw=" + patches[i%2]}
	})
}

// BenchmarkStagedWrite4Chunks is a 4 KiB file staged in four 1 KiB chunks
// with /s and written with /w?blob=: five GETs per operation (the staging
// store, assembly, the journal, a new file created with its directory
// fsynced).
func BenchmarkStagedWrite4Chunks(b *testing.B) {
	e := newEnv(b, rw, nil)
	line := strings.Repeat("staged content, ", 4)[:63] + "\n"
	serverCPU(b, func(i int) []string {
		blob := "b" + strconv.Itoa(i)
		var us []string
		for k := range 4 {
			chunk := fmt.Sprintf("%08d", i) + strings.Repeat(line, 16)[8:]
			us = append(us, e.m+"/s?blob="+blob+"&i="+strconv.Itoa(k)+"&count=4&raw="+transport.Encode(chunk))
		}
		return append(us, e.m+"/w?path=out/"+blob+".txt&blob="+blob+"&count=4&wait=1500")
	})
}

// BenchmarkJournaledTerminalTrue is one /x running `true` through the
// gateway, as an agent runs a command: bind, journal the intent, the
// guard, a real shell in the project (its own process group, reaped),
// wait=1500 until it finished, the record. server-cpu-µs/op is the
// server's; shell-cpu-µs/op the shell's it started.
func BenchmarkJournaledTerminalTrue(b *testing.B) {
	e := newEnvWith(b, rw, mutation.Options{Terminal: &terminal.Config{}}, benchTree())
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		e.host.Shutdown(ctx)
	})
	serverCPUWith(b, func(i int) []string {
		return []string{e.m + "/x?run=" + strconv.Itoa(i) + "&wait=1500&raw=true"}
	}, true)
}

// durable gives the env's session a durable journal in a temp dir, as a
// hub's session has (intents.Create): every new intent's start is synced
// to its file before it runs. The benchmarks without it measure the
// journal in memory, a floor.
func (e *env) durable(b *testing.B) {
	j, err := intents.Create(filepath.Join(b.TempDir(), "journals", "sbench01.0123456789abcdef.jsonl"),
		intents.FileID{Session: "sbench01", Generation: "0123456789abcdef"}, intents.Options{})
	if err != nil {
		b.Fatal(err)
	}
	e.sess.state = mutation.NewStateWith(&files.Ledger{}, nil, j)
	b.Cleanup(func() { j.Close() })
}

// BenchmarkJournaledEditRoundTripDurable is BenchmarkJournaledEditRoundTrip
// with the durable journal a hub's session has: the write-ahead sync of
// the intent's start is the price of a URL that survives a restart.
func BenchmarkJournaledEditRoundTripDurable(b *testing.B) {
	e := newEnv(b, rw, benchTree())
	e.durable(b)
	pairs := [2][2]string{{`"done 17"`, `"finished 17"`}, {`"finished 17"`, `"done 17"`}}
	serverCPU(b, func(i int) []string {
		p := pairs[i%2]
		return []string{e.m + "/e?path=src/file0.go&old=" + transport.Encode(p[0]) + "&new=" + transport.Encode(p[1]) + "&run=" + strconv.Itoa(i) + "&wait=1500"}
	})
}

// BenchmarkJournaledTerminalTrueDurable is BenchmarkJournaledTerminalTrue
// with the durable journal.
func BenchmarkJournaledTerminalTrueDurable(b *testing.B) {
	e := newEnvWith(b, rw, mutation.Options{Terminal: &terminal.Config{}}, benchTree())
	e.durable(b)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		e.host.Shutdown(ctx)
	})
	serverCPUWith(b, func(i int) []string {
		return []string{e.m + "/x?run=" + strconv.Itoa(i) + "&wait=1500&raw=true"}
	}, true)
}
