package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hubdev/hub/internal/cputime"
	"github.com/hubdev/hub/supervisor"
)

// BenchmarkStatus measures what `hub status` costs a running hub, end to
// end against a real daemon (`hub start` on the default adapters, ports
// from the OS), two ways:
//
//   - endpoint: GET /status on the control endpoint over one keep-alive
//     connection, as hub mcp and scripts do; daemon-cpu-µs/op is the
//     daemon's CPU alone (/proc/PID/stat, 10 ms ticks over the run), so
//     run enough calls (-benchtime 2000x) for it to mean something;
//   - cli: the whole `hub status` process a user runs, its own CPU
//     (cli-cpu-ms/op) and the daemon's.
//
// Both report the daemon's peak RSS.
func BenchmarkStatus(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "hub")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "hub.yaml")
	os.WriteFile(cfg, []byte("adapters:\n  stitchslop: {ports: [0]}\n  aiui: {port: 0}\n  pixelle: {port: 0}\n  geturl: {port: 0, control_port: 0}\n"), 0o600)
	env := append(os.Environ(), "HOME="+dir, "XDG_STATE_HOME="+dir+"/state", "XDG_CONFIG_HOME="+dir+"/config")
	hubCmd := func(args ...string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("hub %v: %v\n%s", args, err, out)
		}
	}
	hubCmd("start", "--config", cfg)
	b.Cleanup(func() { hubCmd("stop") })
	st, err := supervisor.ReadState(filepath.Join(dir, "state", "hub"))
	if err != nil {
		b.Fatal(err)
	}
	report := func(b *testing.B, daemon time.Duration) {
		b.ReportMetric(float64(daemon.Nanoseconds())/1e3/float64(b.N), "daemon-cpu-µs/op")
		b.ReportMetric(procStatusKiB(st.PID, "VmHWM:")/1024, "daemon-peak-rss-MiB")
	}
	b.Run("endpoint", func(b *testing.B) {
		hc := &http.Client{}
		defer hc.CloseIdleConnections()
		get := func() {
			req, _ := http.NewRequest(http.MethodGet, st.Control+"/status", nil)
			req.Header.Set(supervisor.KeyHeader, st.Key)
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("HTTP %d", resp.StatusCode)
			}
		}
		get()
		before := procCPU(st.PID)
		for b.Loop() {
			get()
		}
		report(b, procCPU(st.PID)-before)
	})
	b.Run("cli", func(b *testing.B) {
		hubCmd("status")
		before, cli := procCPU(st.PID), cputime.Children()
		for b.Loop() {
			hubCmd("status")
		}
		b.ReportMetric(float64((cputime.Children()-cli).Microseconds())/1e3/float64(b.N), "cli-cpu-ms/op")
		report(b, procCPU(st.PID)-before)
	})
}
