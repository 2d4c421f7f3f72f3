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
)

// BenchmarkStartToReady measures what a user waits for: `hub start` until
// it prints the pid and ports, i.e. until every adapter is listening. It
// also reports the idle hub's resident memory.
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
	var total time.Duration
	var rssKiB float64
	for b.Loop() {
		start := time.Now()
		out := hubCmd("start", "--config", cfg)
		total += time.Since(start)
		b.StopTimer()
		if m := pidRE.FindStringSubmatch(out); m != nil {
			pid, _ := strconv.Atoi(m[1])
			time.Sleep(200 * time.Millisecond) // let start-up garbage settle
			rssKiB = vmRSS(pid)
		}
		hubCmd("stop")
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/start")
	b.ReportMetric(rssKiB, "idle-rss-KiB")
}

// vmRSS reads a process's resident set size in KiB from /proc.
func vmRSS(pid int) float64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseFloat(strings.Fields(rest)[0], 64)
			return n
		}
	}
	return 0
}
