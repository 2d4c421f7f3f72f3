package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/internal/cputime"
)

// BenchmarkStartToReady measures what a user waits for: `hub start` until
// it prints the pid and ports, i.e. until every adapter is listening. It
// also reports the CPU a start costs (the `hub start` process, a waited-for
// child, plus the daemon's own CPU up to ready, from /proc at 10 ms
// resolution) and the idle hub's resident memory and peak.
func BenchmarkStartToReady(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "hub")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "hub.yaml")
	os.WriteFile(cfg, []byte("adapters:\n  stitchslop: {ports: [0]}\n  aiui: {port: 0}\n  pixelle: {port: 0}\n"), 0o600)
	env := append(os.Environ(), "HOME="+dir, "XDG_STATE_HOME="+dir+"/state", "XDG_CONFIG_HOME="+dir+"/config")
	hubCmd := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("hub %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	pidRE := regexp.MustCompile(`pid (\d+)`)
	var total, cpu time.Duration
	var rssKiB, hwmKiB float64
	for b.Loop() {
		start := time.Now()
		before := cputime.Children()
		out := hubCmd("start", "--config", cfg)
		total += time.Since(start)
		b.StopTimer()
		cpu += cputime.Children() - before
		if m := pidRE.FindStringSubmatch(out); m != nil {
			pid, _ := strconv.Atoi(m[1])
			cpu += procCPU(pid)
			time.Sleep(200 * time.Millisecond) // let start-up garbage settle
			rssKiB = procStatusKiB(pid, "VmRSS:")
			hwmKiB = procStatusKiB(pid, "VmHWM:")
		}
		hubCmd("stop")
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/start")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/start")
	b.ReportMetric(rssKiB, "idle-rss-KiB")
	b.ReportMetric(hwmKiB/1024, "peak-rss-MiB")
}

// procCPU is a process's user+system time so far, from /proc/PID/stat
// (clock ticks, 100 per second on Linux).
func procCPU(pid int) time.Duration {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The fields after the command's closing paren: utime and stime are
	// the 12th and 13th of them.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return time.Duration(u+s) * 10 * time.Millisecond
}

// procStatusKiB reads one KiB field (VmRSS:, VmHWM:) of /proc/PID/status.
func procStatusKiB(pid int, field string) float64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), field); ok {
			n, _ := strconv.ParseFloat(strings.Fields(rest)[0], 64)
			return n
		}
	}
	return 0
}
