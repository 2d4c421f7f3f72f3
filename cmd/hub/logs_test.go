package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

func TestFollowFileCopiesAppendedLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hub.log")
	os.WriteFile(path, []byte("old line\n"), 0o600)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// As `hub logs -f` does: print the tail, then follow from where the
	// tail's read ended, so a line appended in between is not lost.
	if tail, err := lastLines(f, 10); err != nil || len(tail) != 1 {
		t.Fatalf("tail = %q, %v", tail, err)
	}
	var out adaptertest.SyncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- followFile(ctx, &out, f, time.Millisecond) }()

	w, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	w.WriteString("new line 1\n")
	w.WriteString("new line 2\n")
	w.Close()
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(out.String(), "new line 2"); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("appended lines never followed: %q", out.String())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "new line 1\nnew line 2\n" {
		t.Fatalf("followed %q; want only the appended lines", got)
	}
}

func TestLastLines(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b|c"},
		{"a\nb\nc", 5, "a|b|c"},
		{"", 3, ""},
		{"a\n", 0, ""},
	} {
		got, err := lastLines(strings.NewReader(tt.in), tt.n)
		if err != nil || strings.Join(got, "|") != tt.want {
			t.Errorf("lastLines(%q, %d) = %q, %v; want %q", tt.in, tt.n, got, err, tt.want)
		}
	}
}

// `hub logs -f` keeps following when the running hub rotates its log: the
// rest of the old file, then the new one, every line once and in order.
func TestFollowFileAcrossRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hub.log")
	w, err := hub.OpenRotating(path, 200, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f, err := hub.OpenPrivate(path, os.O_RDONLY, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out adaptertest.SyncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- followFile(ctx, &out, f, time.Millisecond) }()
	var want strings.Builder
	for i := range 40 { // 40 × 27 bytes through a 200-byte cap: several rotations
		line := fmt.Sprintf("{\"msg\":\"followed %03d\"}\n", i)
		want.WriteString(line)
		w.Write([]byte(line))
		// Keep the writer within the two kept files of the follower, as
		// a real log at 10 MiB per file is.
		adaptertest.WaitFor(t, "line followed", func() bool { return strings.Contains(out.String(), line) })
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != want.String() {
		t.Fatalf("followed:\n%s\nwant:\n%s", got, want.String())
	}
}
