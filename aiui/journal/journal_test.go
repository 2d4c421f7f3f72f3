package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/aiui/jsonstr"
	"github.com/hubdev/hub/hub"
)

func body(s string) *jsonstr.Buffer {
	var b jsonstr.Buffer
	b.WriteString(s)
	return &b
}

func open(t testing.TB, path string, limit int, maxBytes int64) *Journal {
	t.Helper()
	j, err := Open(path, limit, maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

func deliver(t testing.TB, j *Journal, text, to string) *Entry {
	t.Helper()
	if err := j.Begin(); err != nil {
		t.Fatal(err)
	}
	e, err := j.Append(Prompt{Meta: map[string]string{"kind": "prompt"}, Root: "/repo", Body: body(text), To: to})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.End(); err != nil {
		t.Fatal(err)
	}
	return e
}

func texts(t testing.TB, path string) string {
	t.Helper()
	recs, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, r.Text+"@"+r.DeliveredTo)
	}
	return strings.Join(out, "|")
}

func record(t testing.TB, j *Journal, e *Entry, to string) Record {
	t.Helper()
	var buf bytes.Buffer
	v := j.View(e)
	defer v.Close()
	if err := v.WriteRecord(&buf, to); err != nil {
		t.Fatal(err)
	}
	var r Record
	if err := json.Unmarshal(buf.Bytes(), &r); err != nil {
		t.Fatalf("WriteRecord wrote %q: %v", buf.Bytes(), err)
	}
	return r
}

func TestAppendAndReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	j := open(t, path, 10, 1<<20)
	a := deliver(t, j, "first \"quoted\"\nline", "")
	b := deliver(t, j, "second é", "mcp:f1")
	if a.Seq != 1 || b.Seq != 2 || j.Pending() != 1 {
		t.Fatalf("seqs %d %d, pending %d", a.Seq, b.Seq, j.Pending())
	}
	if r := record(t, j, a, "shell"); r.Text != "first \"quoted\"\nline" || r.DeliveredTo != "shell" || r.Meta["kind"] != "prompt" || r.Root != "/repo" || r.ID != a.ID || r.At.IsZero() {
		t.Fatalf("record = %+v", r)
	}
	if got := texts(t, path); got != "first \"quoted\"\nline@|second é@mcp:f1" {
		t.Fatalf("record = %q", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
	j2 := open(t, path, 10, 1<<20)
	if j2.Len() != 2 || j2.Pending() != 1 || j2.Lookup(b.ID).To != "mcp:f1" {
		t.Fatalf("reopened: %d prompts, %d pending", j2.Len(), j2.Pending())
	}
	if e := deliver(t, j2, "third", ""); e.Seq != 3 {
		t.Fatalf("seq after reopen = %d", e.Seq)
	}
}

// TestTwoJournalsShareOneFile: each sees the other's prompts and state at
// its next Begin, and seqs stay unique across them.
func TestTwoJournalsShareOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	a := open(t, path, 10, 1<<20)
	b := open(t, path, 10, 1<<20)
	deliver(t, a, "from a", "")
	eb := deliver(t, b, "from b", "")
	deliver(t, a, "from a again", "")
	if eb.Seq != 2 {
		t.Fatalf("b's seq = %d, want 2", eb.Seq)
	}
	a.Begin()
	if a.Len() != 3 || a.Pending() != 3 {
		t.Fatalf("a sees %d prompts, %d pending", a.Len(), a.Pending())
	}
	a.SetTo(a.Lookup(eb.ID), "shell")
	a.End()
	b.Begin()
	defer b.End()
	if b.Lookup(eb.ID).To != "shell" || b.Pending() != 2 {
		t.Fatalf("b did not see a's mark: %+v", b.Lookup(eb.ID))
	}
	if got := texts(t, path); got != "from a@|from b@shell|from a again@" {
		t.Fatalf("record = %q", got)
	}
}

// TestTornLastLineIsSkipped: a line cut short by a crash is never read,
// nothing before it is lost, and the next append starts a clean line.
func TestTornLastLineIsSkipped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	j := open(t, path, 10, 1<<20)
	deliver(t, j, "kept", "")
	j.Close()
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"text":"cut in the mid`)
	f.Close()
	if got := texts(t, path); got != "kept@" {
		t.Fatalf("record with a torn tail = %q", got)
	}
	j = open(t, path, 10, 1<<20)
	deliver(t, j, "after the crash", "")
	if got := texts(t, path); got != "kept@|after the crash@" {
		t.Fatalf("record = %q", got)
	}
}

// A torn line that is a whole prompt but for its newline (a write cut just
// before it) stays dead once the next append terminates it: it was never
// acknowledged and its seq was given out again, so it must not come back
// in this process, in another reading the file, or after a restart.
func TestTornCompleteLineStaysDead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	j := open(t, path, 10, 1<<20)
	e := deliver(t, j, "kept", "")
	j.Close()
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	fmt.Fprintf(f, `{"text":"torn but whole","id":"AAAAAAAAAAAAAAAA","seq":%d,"at":"2026-12-01T20:50:00Z","meta":{"kind":"prompt"}}`, e.Seq+1)
	f.Close()
	other := open(t, path, 10, 1<<20) // a second backend on the record
	j = open(t, path, 10, 1<<20)
	after := deliver(t, j, "after the crash", "")
	if after.Seq != e.Seq+1 {
		t.Fatalf("seq %d after the torn line, want %d", after.Seq, e.Seq+1)
	}
	deliver(t, other, "from the other", "")
	if got := texts(t, path); got != "kept@|after the crash@|from the other@" {
		t.Fatalf("record = %q", got)
	}
	j.Close()
	j = open(t, path, 10, 1<<20)
	if n, p := j.Len(), j.Pending(); n != 3 || p != 3 {
		t.Fatalf("%d prompts, %d pending after a restart, want 3 and 3", n, p)
	}
}

func TestBoundsDropTheOldest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	j := open(t, path, 3, 1<<20)
	var dropped []string
	j.OnDrop = func(e *Entry) { dropped = append(dropped, fmt.Sprint(e.Seq)) }
	for i := range 5 {
		deliver(t, j, fmt.Sprint(i), "")
	}
	if got := texts(t, path); got != "2@|3@|4@" || strings.Join(dropped, ",") != "1,2" {
		t.Fatalf("record = %q, dropped %v", got, dropped)
	}
	k := open(t, filepath.Join(t.TempDir(), "p.jsonl"), 100, 3<<10)
	for i := range 10 {
		deliver(t, k, fmt.Sprint(i, strings.Repeat("x", 1<<10)), "")
	}
	recs, _ := Read(k.Path())
	if len(recs) != 2 || !strings.HasPrefix(recs[1].Text, "9") || k.prompts > 3<<10 {
		t.Fatalf("byte bound: %d prompts, %d bytes", len(recs), k.prompts)
	}
}

// TestAppendDoesNotRewrite: delivering into a large record appends its
// line and nothing else (the cost is O(prompt), not O(record)).
func TestAppendDoesNotRewrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	j := open(t, path, 500, 64<<20)
	for range 100 {
		deliver(t, j, strings.Repeat("y", 100<<10), "")
	}
	before, _ := os.Stat(path)
	deliver(t, j, "one more", "mcp:f")
	after, _ := os.Stat(path)
	want := int64(len(`{"text":"one more","id":"0123456789ABCDEF","seq":101,"at":"`)) // and the rest of its two lines
	if !os.SameFile(before, after) || after.Size()-before.Size() < want || after.Size()-before.Size() > want+200 {
		t.Fatalf("append grew the record by %d bytes (same file: %v)", after.Size()-before.Size(), os.SameFile(before, after))
	}
}

// TestCompaction: once dead lines outweigh live ones enough the record is
// rewritten with the live ones only; a view opened before keeps reading
// its file, and another journal on the record re-reads it.
func TestCompaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	j := open(t, path, 4, 1<<20)
	other := open(t, path, 4, 1<<20)
	first := deliver(t, j, "prompt 0", "")
	v := j.View(first)
	defer v.Close()
	before, _ := os.Stat(path)
	n := 1
	for ; n < 100; n++ {
		deliver(t, j, fmt.Sprint("prompt ", n), "")
		if after, _ := os.Stat(path); !os.SameFile(before, after) {
			break
		}
		if dead := j.end - j.live; dead > compactRatio*j.live {
			t.Fatalf("dead %d > %d × live %d without a compaction", dead, compactRatio, j.live)
		}
	}
	if n == 100 {
		t.Fatal("no compaction after 96 prompts fell out of a 4-prompt record")
	}
	if j.end != j.live {
		t.Fatalf("a compaction left %d dead bytes", j.end-j.live)
	}
	if r, err := v.Record(); err != nil || r.Text != "prompt 0" {
		t.Fatalf("a view across a compaction read %+v, %v", r, err)
	}
	want := fmt.Sprintf("prompt %d@|prompt %d@|prompt %d@|prompt %d@", n-3, n-2, n-1, n)
	if got := texts(t, path); got != want {
		t.Fatalf("record = %q, want %q", got, want)
	}
	other.Begin()
	defer other.End()
	if other.Len() != 4 || other.Entries()[0].Seq != int64(n-2) {
		t.Fatalf("the other journal sees %d prompts from seq %d", other.Len(), other.Entries()[0].Seq)
	}
	if r := record(t, other, other.Entries()[3], ""); r.Text != fmt.Sprint("prompt ", n) {
		t.Fatalf("the other journal read %q after the compaction", r.Text)
	}
}

// TestLegacyRecord: a record written by the previous implementation
// (whole Record lines, deliveredTo inline, some without ids) is read as it
// was, and rewritten in the journal layout at open.
func TestLegacyRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	legacy := `{"id":"A1","seq":1,"at":"2026-01-02T03:04:05Z","text":"old one","meta":{"kind":"prompt"},"deliveredTo":"shell"}
{"seq":2,"at":"2026-01-02T03:04:06Z","text":"no id","meta":{"kind":"prompt"},"root":"/r"}
not json at all
`
	os.WriteFile(path, []byte(legacy), 0o600)
	if got := texts(t, path); got != "old one@shell|no id@" {
		t.Fatalf("legacy record = %q", got)
	}
	j := open(t, path, 10, 1<<20)
	if j.Len() != 2 || j.Pending() != 1 {
		t.Fatalf("%d prompts, %d pending", j.Len(), j.Pending())
	}
	data, _ := os.ReadFile(path)
	if !bytes.HasPrefix(data, []byte(textOpen)) || bytes.Contains(data, []byte("not json")) {
		t.Fatalf("not rewritten at open:\n%s", data)
	}
	if got := texts(t, path); got != "old one@shell|no id@" {
		t.Fatalf("rewritten record = %q", got)
	}
	if r := record(t, j, j.Entries()[1], ""); r.Root != "/r" || r.ID != j.Entries()[1].ID || r.ID == "" {
		t.Fatalf("record = %+v", r)
	}
}

func TestTakeMarksPendingAsShell(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	if err := Take(path, func(Record) error { t.Fatal("a missing record has prompts"); return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("Take created a record")
	}
	j := open(t, path, 10, 1<<20)
	deliver(t, j, "unread", "")
	deliver(t, j, "read", "mcp:f")
	var got []string
	Take(path, func(r Record) error { got = append(got, r.Text+"@"+r.DeliveredTo); return nil })
	if strings.Join(got, "|") != "unread@shell|read@mcp:f" {
		t.Fatalf("took %q", got)
	}
	j.Begin()
	defer j.End()
	if j.Pending() != 0 {
		t.Fatal("the backend still sees the taken prompt as pending")
	}
}

// TestLockExcludes: a journal's Begin waits for another's End.
func TestLockExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	j := open(t, path, 10, 1<<20)
	j.Begin()
	lf, _ := os.Open(path + ".lock")
	defer lf.Close()
	if err := hub.LockFile(lf, true, false); err == nil {
		t.Fatal("the record is not locked between Begin and End")
	}
	j.End()
	if err := hub.LockFile(lf, true, false); err != nil {
		t.Fatalf("the record is still locked after End: %v", err)
	}
}
