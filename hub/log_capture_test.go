package hub

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// crashChildEnv makes the test binary a process that captures crashes in
// the named dir, writes a stray line to stderr, and panics.
const crashChildEnv = "HUB_TEST_CRASH_DIR"

func TestMainCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("the crashing child of TestIngestRealCrash")
	}
	if err := CaptureCrashes(dir); err != nil {
		t.Fatal(err)
	}
	os.Stderr.WriteString("hub: warning: a stray line\nhub: adapter aiui: cannot listen on 127.0.0.1:8686: address already in use\n")
	go panic("boom \"quoted\"") // an unhandled panic in another goroutine
	select {}
}

// TestIngestRealCrash: a real process crashes with an unhandled panic; its
// stderr went to hub.out, the runtime's report to hub.crash. Ingested,
// every line of the log is JSON: the stray lines one record each, the
// crash one record with the whole report, not repeated.
func TestIngestRealCrash(t *testing.T) {
	dir := t.TempDir()
	out, err := OpenPrivate(filepath.Join(dir, OutputFileName), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600, false)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainCrashChild$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err == nil {
		t.Fatal("the child did not crash")
	}
	out.Close()
	raw, _ := os.ReadFile(filepath.Join(dir, OutputFileName))
	if !bytes.Contains(raw, []byte("panic: boom")) {
		t.Fatalf("the child's stderr has no crash: %s", raw)
	}

	var log bytes.Buffer
	log.WriteString(`{"level":"INFO","msg":"before"}` + "\n")
	if err := Ingest(dir, &log); err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	sc := bufio.NewScanner(&log)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a log line is not JSON: %q", sc.Text())
		}
		recs = append(recs, m)
	}
	if len(recs) < 4 {
		t.Fatalf("records: %v", recs)
	}
	crashes := 0
	for _, r := range recs[1:] {
		switch r["stream"] {
		case "crash":
			crashes++
			if !strings.HasPrefix(r["msg"].(string), `the hub crashed: panic: boom "quoted"`) || !strings.Contains(r["trace"].(string), "goroutine ") {
				t.Errorf("crash record: %v", r)
			}
		case "output":
			if strings.Contains(r["msg"].(string), "goroutine") || strings.Contains(r["msg"].(string), "panic:") {
				t.Errorf("the crash report was repeated line by line: %v", r)
			}
		default:
			t.Errorf("record of no stream: %v", r)
		}
	}
	if crashes != 1 {
		t.Fatalf("%d crash records, want 1", crashes)
	}
	if recs[1]["msg"] != "hub: warning: a stray line" || recs[1]["level"] != "WARN" ||
		recs[2]["msg"] != "hub: adapter aiui: cannot listen on 127.0.0.1:8686: address already in use" || recs[2]["level"] != "ERROR" {
		t.Fatalf("stray lines: %v %v", recs[1], recs[2])
	}
	// Ingested once: both files are empty, a second Ingest adds nothing.
	n := log.Len()
	Ingest(dir, &log)
	if log.Len() != n {
		t.Fatalf("a second Ingest wrote %q", log.String()[n:])
	}
}

// TestIngestBounds: a huge stray output keeps its end, cut at a line
// start, with every line bounded; a file that is not private is refused
// and left alone.
func TestIngestBounds(t *testing.T) {
	dir := t.TempDir()
	var big strings.Builder
	for big.Len() < 2*maxOutput {
		big.WriteString(strings.Repeat("x", 100) + "\n")
	}
	big.WriteString(strings.Repeat("y", 3*maxOutputLine) + "\nlast line\n")
	os.WriteFile(filepath.Join(dir, OutputFileName), []byte(big.String()), 0o600)
	var log bytes.Buffer
	if err := Ingest(dir, &log); err != nil {
		t.Fatal(err)
	}
	if log.Len() > 2*maxOutput {
		t.Fatalf("ingested %d bytes from a file of %d", log.Len(), big.Len())
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		if msg := m["msg"].(string); len(msg) > maxOutputLine+len("…") || msg == "" || strings.Contains(msg, "\n") {
			t.Fatalf("line not bounded or cut: %d bytes", len(msg))
		}
	}
	if !strings.Contains(lines[len(lines)-1], `"msg":"last line"`) {
		t.Fatalf("the end was not kept: %s", lines[len(lines)-1])
	}
	// Not private: refused, left as it is.
	p := filepath.Join(dir, CrashFileName)
	os.WriteFile(p, []byte("panic: planted\n"), 0o666)
	os.Chmod(p, 0o666)
	log.Reset()
	if err := Ingest(dir, &log); err == nil || log.Len() != 0 {
		t.Fatalf("a world-writable crash file was ingested: %v %q", err, log.String())
	}
	if b, _ := os.ReadFile(p); string(b) != "panic: planted\n" {
		t.Fatal("a refused file was changed")
	}
}

func FuzzIngest(f *testing.F) {
	f.Add([]byte("panic: x\n\ngoroutine 1 [running]:\nmain.main()\n"), []byte("hub: a\npanic: x\n\ngoroutine 1 [running]:\n"))
	f.Add([]byte(""), []byte("\xff\xfe\r\nline\x00\n"))
	f.Fuzz(func(t *testing.T, crash, out []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, CrashFileName), crash, 0o600)
		os.WriteFile(filepath.Join(dir, OutputFileName), out, 0o600)
		var log bytes.Buffer
		if err := Ingest(dir, &log); err != nil {
			t.Fatal(err)
		}
		for l := range strings.Lines(log.String()) {
			if !json.Valid([]byte(l)) {
				t.Fatalf("not JSON: %q", l)
			}
		}
	})
}
