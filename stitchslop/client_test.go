package stitchslop

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/hub"
)

// §4.1/§4.4: a session file whose pid is alive but whose bridge is not
// there (SIGKILLed and the pid reused, or another bridge took the port) is
// stale: the client exits 3 and says so, it never reports success.
func TestClientStaleSessionFile(t *testing.T) {
	b := startBridge(t, nil)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUpgradeRequired)
	}))
	defer other.Close()
	// Something else that answers every request 200 with a page of its own.
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html>hello</html>"))
	}))
	defer web.Close()
	// A web server whose routes are not these: 404 and 405 pages.
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	cases := []struct {
		name string
		sess func(dir string) int // writes a session file, returns its port
		want string
	}{
		{"connection refused", func(dir string) int {
			p := freePort(t)
			writeSession(dir, sessionFile{Port: p, Key: "k", PID: os.Getpid(), Protocol: 1})
			return p
		}, "stale session file for port"},
		{"key rejected", func(dir string) int {
			writeSession(dir, sessionFile{Port: b.Port(), Key: "not-the-key", PID: os.Getpid(), Protocol: 1})
			return b.Port()
		}, "stale session file for port"},
		{"not a bridge", func(dir string) int {
			p := portOf(t, other.URL)
			writeSession(dir, sessionFile{Port: p, Key: "k", PID: os.Getpid(), Protocol: 1})
			return p
		}, "is not a bridge"},
		{"not a bridge, answers 200", func(dir string) int {
			p := portOf(t, web.URL)
			writeSession(dir, sessionFile{Port: p, Key: "k", PID: os.Getpid(), Protocol: 1})
			return p
		}, "is not a bridge"},
		{"not a bridge, answers 404", func(dir string) int {
			p := portOf(t, notFound.URL)
			writeSession(dir, sessionFile{Port: p, Key: "k", PID: os.Getpid(), Protocol: 1})
			return p
		}, "is not a bridge"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			port := tc.sess(dir)
			for _, pin := range []int{0, port} { // picked as the only one, and by --port
				var stdout, stderr bytes.Buffer
				c := &shellClient{ConfigDir: dir, Port: pin, Stdout: &stdout, Stderr: &stderr}
				_, err := c.do("GET", "/status", nil, frameWait)
				var ec cli.ExitCoder
				if !errors.As(err, &ec) || ec.ExitCode() != hub.ExitNotRunning {
					t.Fatalf("--port %d: err = %v, want exit %d", pin, err, hub.ExitNotRunning)
				}
				if !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("--port %d: message %q does not say %q", pin, err, tc.want)
				}
				if stdout.Len() != 0 {
					t.Fatalf("stdout carried %q", stdout.String())
				}
			}
		})
	}
}

// portOf is the port of a loopback URL.
func portOf(t testing.TB, rawURL string) int {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A bridge that took the request and did not answer in time may have sent
// the command: the client says so instead of "cannot reach the bridge".
func TestClientTimeoutSaysTheCommandMayHaveRun(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	defer slow.Close()
	defer close(release) // first: Close waits for the handler
	dir := t.TempDir()
	writeSession(dir, sessionFile{Port: portOf(t, slow.URL), Key: "k", PID: os.Getpid(), Protocol: 1})
	c := &shellClient{ConfigDir: dir, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
	_, err := c.do("POST", "/call", map[string]any{"command": "x"}, 50*time.Millisecond)
	var ec cli.ExitCoder
	if !errors.As(err, &ec) || ec.ExitCode() != hub.ExitFailed || !strings.Contains(err.Error(), "may or may not have run") {
		t.Fatalf("err = %v", err)
	}
}
