package geturl

import (
	"errors"
	"testing"

	"github.com/hubdev/hub/geturl/engine/terminal"
)

// hub status says which features this OS lacks, naming the OS, and says
// nothing where everything is available.
func TestPlatformNote(t *testing.T) {
	if got := platformNote(nil, nil); got != "" {
		t.Fatalf("nothing missing: %q", got)
	}
	got := platformNote(errors.New("the sandbox is not available on windows"), &terminal.UnsupportedError{GOOS: "windows"})
	want := "the sandbox is not available on windows; " + (&terminal.UnsupportedError{GOOS: "windows"}).Error()
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
