//go:build unix

package aiui

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/hubdev/hub/aiui/channel"
)

// limitFileSize caps the size of files this process writes (as `ulimit -f`
// does; Go ignores SIGXFSZ, so a write past it fails with EFBIG) until the
// test ends. Not parallel: the limit is the whole process's.
func limitFileSize(t *testing.T, n uint64) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	lim := old
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old) })
}

// A prompt the record cannot hold while no face or following shell takes
// it used to be acknowledged with a seq and then lost: nothing recorded
// it, nothing held it in memory. Its sender must be told instead, and
// what was recorded before must stay.
func TestDeliverRefusesAPromptItCanNeitherRecordNorHandOn(t *testing.T) {
	o := newTestOutbox(t, 10)
	if _, err := o.Deliver(channel.Prompt{Text: "before"}); err != nil {
		t.Fatal(err)
	}
	limitFileSize(t, 64<<10)
	seq, err := o.Deliver(channel.Prompt{Text: strings.Repeat("x", 256<<10)})
	if !errors.Is(err, ErrNotRecorded) {
		t.Fatalf("Deliver past the file size limit = seq %d, err %v; want ErrNotRecorded", seq, err)
	}

	// A face attached takes the next one from memory: that one is not lost.
	f := o.Attach("f1", "")
	if ev := next(t, o, f); ev.Prompt == nil || ev.Prompt.Text != "before" {
		t.Fatalf("first event = %+v, want the recorded prompt", ev)
	}
	if _, err := o.Deliver(channel.Prompt{Text: strings.Repeat("y", 256<<10)}); err != nil {
		t.Fatalf("Deliver to an attached face with the record full: %v", err)
	}
	if ev := next(t, o, f); ev.Prompt == nil || len(ev.Prompt.Text) != 256<<10 {
		t.Fatalf("the face got %+v, want the whole prompt", ev.Prompt != nil)
	}
}
