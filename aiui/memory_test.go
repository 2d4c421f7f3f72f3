package aiui

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/internal/race"
)

// restartEnv makes the test binary a backend restarting over a record
// (see TestMain): it serves, measures itself once idle, prints the figures
// and exits.
const restartEnv = "AIUI_TEST_RESTART_HOME"

// restartFigures is what the restarted backend reports about itself.
type restartFigures struct {
	RSS       int64  `json:"rss"`       // VmRSS once idle, after a GC
	Peak      int64  `json:"peak"`      // VmHWM: the most it ever held
	HeapInuse uint64 `json:"heapInuse"` // runtime.MemStats after the GC
	Prompts   int    `json:"prompts"`
}

// runRestarted is the child: a backend started over home's record.
func runRestarted(home string) int {
	var d hub.Dirs
	if err := json.Unmarshal([]byte(home), &d); err != nil {
		fmt.Println(err)
		return 1
	}
	cfg := DefaultConfig()
	cfg.Port = 0
	s := New(cfg)
	ready := make(chan struct{})
	env := &adapters.Env{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Dirs: d, Ready: func(...int) { close(ready) }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, env) }()
	select {
	case <-ready:
	case err := <-done:
		fmt.Println(err)
		return 1
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	f := restartFigures{RSS: procStatusKiB("VmRSS:") << 10, Peak: procStatusKiB("VmHWM:") << 10, HeapInuse: ms.HeapInuse,
		Prompts: s.cur.Load().outbox.j.Len()}
	json.NewEncoder(os.Stdout).Encode(f)
	cancel()
	<-done
	return 0
}

// TestIdleMemoryAfterRestartOverAFullRecord: a backend restarted over a
// full record (500 prompts, 64 MiB) holds none of their text. Measured
// in a fresh process, as the OS sees it: VmRSS once ready and after a GC,
// and VmHWM, the peak while it read the record, both under 20 MiB (and the
// Go heap in use under 8 MiB, also under the race detector).
func TestIdleMemoryAfterRestartOverAFullRecord(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to read a process's RSS")
	}
	dirs := adaptertest.TempDirs(t)
	o, err := openOutbox(dirs, DefaultPromptRecord, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	// fill the byte bound too: each line is its text (a newline encodes to
	// two bytes) plus a few hundred bytes of other fields
	line := "make the baseline amber, then check the contrast.\n"
	per := (maxRecordBytes/DefaultPromptRecord - 512) / (len(line) + 1) * len(line)
	text := strings.Repeat(line, per/len(line))
	for range DefaultPromptRecord {
		o.Deliver(channel.Prompt{Text: text, Meta: map[string]string{"tab_url": "http://localhost:5173/"}, Root: "/repo/app"})
	}
	o.Close()
	if st, _ := os.Stat(o.path); st.Size() < 60<<20 {
		t.Fatalf("the record is %d bytes, not full", st.Size())
	}

	js, _ := json.Marshal(dirs)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), restartEnv+"="+string(js))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("restarted backend: %v\n%s", err, out)
	}
	var f restartFigures
	if err := json.Unmarshal(out, &f); err != nil {
		t.Fatalf("restarted backend said %q", out)
	}
	t.Logf("after a restart over %d prompts: VmRSS %.1f MiB, VmHWM %.1f MiB, HeapInuse %.1f MiB",
		f.Prompts, float64(f.RSS)/(1<<20), float64(f.Peak)/(1<<20), float64(f.HeapInuse)/(1<<20))
	if f.Prompts != DefaultPromptRecord {
		t.Fatalf("the restarted backend indexes %d prompts, want %d", f.Prompts, DefaultPromptRecord)
	}
	if f.HeapInuse > 8<<20 {
		t.Fatalf("the heap holds %d bytes: prompt text is kept in memory", f.HeapInuse)
	}
	if race.Enabled {
		t.Log("RSS bound not asserted under the race detector")
		return
	}
	if f.RSS > 20<<20 || f.Peak > 20<<20 {
		t.Fatalf("idle RSS %d, peak %d: over 20 MiB", f.RSS, f.Peak)
	}
}
