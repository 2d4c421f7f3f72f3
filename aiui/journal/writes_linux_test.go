package journal

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubdev/hub/aiui/jsonstr"
)

// writeCalls is this process's count of write system calls so far
// (/proc/self/io's syscw: write, pwrite, writev and pwritev alike).
func writeCalls(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "syscw: "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("/proc/self/io has no syscw")
	return 0
}

// TestAppendIsOneWrite: a prompt's line (held in several chunks, taken at
// once so it has a "to" line too) reaches the record in one system call,
// not one per chunk and piece; and the record reads back the same.
func TestAppendIsOneWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	j := open(t, path, 100, 64<<20)
	deliver(t, j, "first", "")
	text := strings.Repeat("make the baseline amber\n", (256<<10)/24)
	enc := jsonstr.Append(nil, text)
	var b jsonstr.Buffer
	for p := enc; len(p) > 0; {
		k := min(len(p), 60<<10)
		for k < len(p) && (p[k-1] == '\\' || p[k]&0xC0 == 0x80) {
			k++
		}
		n, ok := jsonstr.Scan(p[:k])
		if !ok {
			t.Fatalf("piece %q does not scan", p[:k])
		}
		if err := b.Write(p[:k], n); err != nil {
			t.Fatal(err)
		}
		p = p[k:]
	}
	if err := j.Begin(); err != nil {
		t.Fatal(err)
	}
	before := writeCalls(t)
	if _, err := j.Append(Prompt{Meta: map[string]string{"kind": "prompt"}, Root: "/repo", Body: &b, To: "shell"}); err != nil {
		t.Fatal(err)
	}
	writes := writeCalls(t) - before
	if err := j.End(); err != nil {
		t.Fatal(err)
	}
	if writes != 1 {
		t.Errorf("Append made %d write system calls, want 1", writes)
	}
	j.Close()
	recs, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Text != "first" || recs[1].Text != text || recs[1].DeliveredTo != "shell" {
		t.Errorf("read back %d records (second's text %d bytes, want %d)", len(recs), len(recs[len(recs)-1].Text), len(text))
	}
	raw, _ := os.ReadFile(path)
	if bytes.Count(raw, []byte("\n")) != 3 {
		t.Errorf("record has %d lines, want 3 (two prompts, one to line)", bytes.Count(raw, []byte("\n")))
	}
}
