package geturl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The login URL is a one-time secret: in the browser's argv any local
// user could read it (/proc/<pid>/cmdline) and redeem it first. The
// browser gets the path of a private file that redirects to it instead.
func TestOpenBrowserKeepsTheLoginOutOfArgv(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	argv := filepath.Join(t.TempDir(), "argv")
	browser := filepath.Join(t.TempDir(), "browser")
	os.WriteFile(browser, []byte("#!/bin/sh\nprintf '%s' \"$*\" > '"+argv+".tmp' && mv '"+argv+".tmp' '"+argv+"'\n"), 0o755)
	t.Setenv("BROWSER", browser)
	const url = "http://127.0.0.1:1/#login=SeCrEt&x=<1>"
	if err := openBrowser(dir, url); err != nil {
		t.Fatal(err)
	}
	var got []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var err error
		if got, err = os.ReadFile(argv); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the browser was not started")
		}
	}
	if strings.Contains(string(got), "SeCrEt") {
		t.Fatalf("the login token is in the browser's argv: %q", got)
	}
	fi, err := os.Lstat(string(got))
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 || filepath.Dir(string(got)) != dir {
		t.Fatalf("the browser got %q (%v, %v), want a private file in %s", got, fi, err, dir)
	}
	page, _ := os.ReadFile(string(got))
	if !strings.Contains(string(page), `url=http://127.0.0.1:1/#login=SeCrEt&amp;x=&lt;1&gt;`) {
		t.Fatalf("redirect page: %s", page)
	}
}
