package intents

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/hub"
)

var testID = FileID{Session: "s0a1b2c", Generation: "0123456789abcdef"}

func journalPath(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "journals", "s0a1b2c.jsonl")
}

func mustCreate(t *testing.T, path string, o Options) *Journal {
	t.Helper()
	j, err := Create(path, testID, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

func mustLoad(t *testing.T, path string, o Options) *Journal {
	t.Helper()
	j, err := Load(path, testID, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

func failingIntent(arg string, n *atomic.Int32) Intent {
	return Intent{Tool: "edit", Args: arg, Origin: "/e?path=a&raw=x", Exec: func(context.Context, *Run) (any, *fault.Error) {
		n.Add(1)
		return nil, (&fault.Error{Code: "stale_read", Detail: "changed <since> & then", Hint: "read it again", Retryable: true,
			Action: fault.ActionRereadThenRetry}).With("path", "/project/a").With("missingLines", []int{3, 4})
	}}
}

// A durable journal reloaded by a new process answers every finished
// intent with the same result and the same structured error, byte for
// byte, and runs none of them again.
func TestDurableJournalSurvivesARestart(t *testing.T) {
	path := journalPath(t)
	j := mustCreate(t, path, Options{Now: fixed})
	var n atomic.Int32
	ok := Intent{Tool: "write", Args: map[string]any{"path": "/project/a"}, Origin: "/w?path=a&raw=<&>", Exec: func(_ context.Context, r *Run) (any, *fault.Error) {
		r.Running()
		r.SetTag(5)
		n.Add(1)
		return map[string]any{"path": "/project/a", "note": "<&> é \u2028 \x7f"}, nil
	}}
	rec1, start, _ := j.Begin(ok)
	start(context.Background())
	rec2, start, _ := j.Begin(failingIntent("x", &n))
	start(context.Background())
	before1, _ := j.Get(rec1.Call)
	before2, _ := j.Get(rec2.Call)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("journal file: %v %v", err, fi)
	}

	re := mustLoad(t, path, Options{Now: fixed})
	got1, s, err := re.Begin(ok)
	if err != nil || s != nil || got1.State != Succeeded || !bytes.Equal(got1.Result, before1.Result) || got1.Tag != 5 || got1.Origin != ok.Origin {
		t.Fatalf("replayed success after the restart: %+v %v (start %v); before %s", got1, err, s != nil, before1.Result)
	}
	got2, s, err := re.Begin(failingIntent("x", &n))
	if err != nil || s != nil || got2.State != Failed {
		t.Fatalf("replayed failure: %+v %v", got2, err)
	}
	b1, _ := before2.Err.MarshalJSON()
	b2, _ := got2.Err.MarshalJSON()
	if !bytes.Equal(b1, b2) {
		t.Fatalf("structured error changed across the restart:\n%s\n%s", b1, b2)
	}
	if n.Load() != 2 {
		t.Fatalf("executed %d times, want 2", n.Load())
	}
}

// The run line is on disk (synced) before the executor is called; an
// intent the file leaves running (the process died in it) is failed as
// interrupted on load and never runs again; a torn last line (the process
// died appending it) is ignored.
func TestWriteAheadAndInterrupted(t *testing.T) {
	path := journalPath(t)
	j := mustCreate(t, path, Options{Now: fixed})
	var n atomic.Int32
	var seen bool
	in := Intent{Tool: "terminal", Args: "make", Origin: "/x?cmd=make", Exec: func(_ context.Context, r *Run) (any, *fault.Error) {
		b, _ := os.ReadFile(path)
		seen = bytes.Contains(b, []byte(`"k":"run","call":"`+r.Call()+`"`))
		n.Add(1)
		return "ok", nil
	}}
	_, start, _ := j.Begin(in)
	start(context.Background())
	if !seen {
		t.Fatal("the executor ran before its run line was in the file")
	}

	// What a crash in the middle of the next intent leaves: its run line,
	// no done line, and half of another line.
	crash := func() Intent {
		return Intent{Tool: "terminal", Args: "deploy", Origin: "/x?cmd=deploy", Exec: func(context.Context, *Run) (any, *fault.Error) {
			n.Add(1)
			return "deployed", nil
		}}
	}
	d, _ := Identity("terminal", "deploy", "")
	e := &entry{rec: Record{Call: AutoID("terminal", d), Tool: "terminal", Origin: "/x?cmd=deploy", Created: fixed()}, digest: d}
	b, _ := encodeLine(runLine(e))
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write(b)
	f.WriteString(`{"k":"run","call":"auto:terminal:00`)
	f.Close()

	re := mustLoad(t, path, Options{Now: fixed})
	rec, s, err := re.Begin(crash())
	if err != nil || s != nil {
		t.Fatalf("the interrupted intent would run again: %+v %v", rec, err)
	}
	if rec.State != Failed || rec.Err == nil || rec.Err.Code != CodeInterrupted || !rec.Err.Retryable ||
		!strings.Contains(rec.Err.Hint, "retry") || !strings.Contains(rec.Err.Detail, "unknown") {
		t.Fatalf("interrupted record: %+v %+v", rec, rec.Err)
	}
	if n.Load() != 1 {
		t.Fatalf("executed %d times", n.Load())
	}
	// Loaded once, the interruption is in the file: a second restart says
	// the same.
	re.Close()
	again := mustLoad(t, path, Options{Now: fixed})
	if rec, _ := again.Get(AutoID("terminal", d)); rec.State != Failed || rec.Err.Code != CodeInterrupted {
		t.Fatalf("after a second restart: %+v", rec)
	}
}

// Write-ahead: an intent that cannot be recorded does not run.
func TestUnrecordableIntentDoesNotRun(t *testing.T) {
	path := journalPath(t)
	j := mustCreate(t, path, Options{})
	j.file.mu.Lock()
	j.file.f.Close() // the disk went away under the open file
	j.file.mu.Unlock()
	var n atomic.Int32
	rec, start, _ := j.Begin(writeIntent("/project/a", "x", &n))
	start(context.Background())
	got, _ := j.Get(rec.Call)
	if n.Load() != 0 || got.State != Failed || got.Err.Code != CodeJournalUnavailable {
		t.Fatalf("ran %d, %+v", n.Load(), got)
	}
}

// Compaction keeps the file within its bound while tombstones keep old
// intents from running again, after a restart too.
func TestFileIsBoundedAndTombstonesSurvive(t *testing.T) {
	path := journalPath(t)
	o := Options{MaxRecords: 8, MaxBytes: 64 << 10}
	j := mustCreate(t, path, o)
	var n atomic.Int32
	big := strings.Repeat("r", 4<<10)
	maxSize := int64(0)
	for i := range 600 {
		_, s, err := j.Begin(Intent{Tool: "write", Args: i, Exec: func(context.Context, *Run) (any, *fault.Error) { n.Add(1); return big, nil }})
		if err != nil {
			t.Fatal(err)
		}
		s(context.Background())
		if fi, _ := os.Stat(path); fi.Size() > maxSize {
			maxSize = fi.Size()
		}
	}
	if maxSize > 2*compactMin+MaxLineBytes/1024 {
		t.Fatalf("file grew to %d bytes", maxSize)
	}
	t.Logf("600 intents of 4 KiB results: file at most %d bytes", maxSize)
	j.Close()
	re := mustLoad(t, path, o)
	for _, i := range []int{0, 300, 599} {
		rec, s, err := re.Begin(Intent{Tool: "write", Args: i})
		if err != nil || s != nil || rec.State != Succeeded {
			t.Fatalf("intent %d after the restart: %+v %v", i, rec, err)
		}
	}
	if re.Len() > 8 || n.Load() != 600 {
		t.Fatalf("%d records, %d executions", re.Len(), n.Load())
	}
}

// Remove deletes the file: a generation's journal ends with its authority.
func TestRemoveDeletesTheFile(t *testing.T) {
	path := journalPath(t)
	j := mustCreate(t, path, Options{})
	var n atomic.Int32
	_, s, _ := j.Begin(writeIntent("/project/a", "x", &n))
	if err := j.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("file after Remove: %v", err)
	}
	s(context.Background()) // an intent of an ended generation does not start
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("file came back: %v", err)
	}
	if n.Load() != 0 || j.Durable() {
		t.Fatalf("ran %d times after the removal; durable %v", n.Load(), j.Durable())
	}
	if _, err := Load(path, testID, Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
}

// A file that is not this generation's, not well-formed, or not private
// is refused whole: nothing of it is trusted.
func TestRefusedFiles(t *testing.T) {
	path := journalPath(t)
	j := mustCreate(t, path, Options{Now: fixed})
	var n atomic.Int32
	_, s, _ := j.Begin(writeIntent("/project/a", "x", &n))
	s(context.Background())
	j.Close()
	good, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(good), "\n")

	d, _ := Identity("write", "other", "")
	forged := regexp.MustCompile(`"digest":"[0-9a-f]{64}"`).ReplaceAllString(lines[1], fmt.Sprintf(`"digest":"%x"`, d[:]))
	for name, content := range map[string]string{
		"another generation": strings.Replace(string(good), testID.Generation, "fedcba9876543210", 1),
		"another session":    strings.Replace(string(good), testID.Session, "s999999", 1),
		"no header":          strings.Join(lines[1:], ""),
		"garbage line":       lines[0] + "{not json\n" + strings.Join(lines[1:], ""),
		"unknown field":      lines[0] + strings.Replace(lines[1], `{"k":"run",`, `{"k":"run","x":1,`, 1),
		"digest mismatch":    lines[0] + forged,
		"unknown kind":       lines[0] + `{"k":"exec"}` + "\n",
		"empty":              "",
	} {
		os.WriteFile(path, []byte(content), 0o600)
		if _, err := Load(path, testID, Options{}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}

	os.WriteFile(path, good, 0o644)
	os.Chmod(path, 0o644)
	if _, err := Load(path, testID, Options{}); !errors.Is(err, hub.ErrUnsafeFile) {
		t.Errorf("a 0644 file: %v", err)
	}
	os.Remove(path)
	elsewhere := filepath.Join(t.TempDir(), "planted")
	os.WriteFile(elsewhere, good, 0o600)
	os.Symlink(elsewhere, path)
	if _, err := Load(path, testID, Options{}); !errors.Is(err, hub.ErrUnsafeFile) {
		t.Errorf("a symbolic link: %v", err)
	}
}

// Intents starting and finishing concurrently while the file is
// compacted under them: every one is in the reloaded journal (a record or
// a tombstone), and none runs again.
func TestConcurrentDurableIntents(t *testing.T) {
	path := journalPath(t)
	o := Options{MaxRecords: 16, MaxBytes: 256 << 10}
	j := mustCreate(t, path, o)
	var n atomic.Int32
	big := strings.Repeat("c", 16<<10)
	in := func(i int) Intent {
		return Intent{Tool: "write", Args: i, Exec: func(context.Context, *Run) (any, *fault.Error) { n.Add(1); return big, nil }}
	}
	const workers, each = 8, 25
	done := make(chan struct{})
	for w := range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for k := range each {
				i := w*each + k
				for {
					_, s, err := j.Begin(in(i))
					if err != nil && err.Code == CodeJournalFull {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					if s != nil {
						s(context.Background())
					}
					break
				}
				j.Begin(in(i)) // a replay
			}
		}()
	}
	for range workers {
		<-done
	}
	j.Close()
	re := mustLoad(t, path, o)
	for i := range workers * each {
		if rec, s, err := re.Begin(in(i)); err != nil || s != nil || rec.State != Succeeded {
			t.Fatalf("intent %d after the restart: %+v %v", i, rec, err)
		}
	}
	if n.Load() != workers*each {
		t.Fatalf("%d executions of %d intents", n.Load(), workers*each)
	}
}
