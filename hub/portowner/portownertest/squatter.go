// Package portownertest runs a loopback listener as another local user
// (nobody), for tests of what the hub does when someone else holds a port.
//
// The squatter is the test binary itself, re-executed through setpriv with
// the uid and gid of nobody: a package that uses Start calls Main first in
// its TestMain. It serves HTTP and records every request it receives,
// with every header it carried, and counts every byte it reads, so a test
// can show that no credential reached it, or nothing at all; it answers
// 401 with a Basic challenge to a request without an Authorization
// header, to ask for one. With Options.NoAccept it accepts nothing until
// it stops, then reads what waited in its queue. Start skips the test
// when the test does not run as root or setpriv or the user nobody is
// missing.
package portownertest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hubdev/hub/internal/nobody"
)

// envListen carries the squatter's listen address into the re-executed
// test binary, envDefer, envDevice and envNoAccept its Options.
const (
	envListen   = "PORTOWNERTEST_SQUAT_ADDR"
	envDefer    = "PORTOWNERTEST_DEFER_ACCEPT"
	envDevice   = "PORTOWNERTEST_DEVICE"
	envNoAccept = "PORTOWNERTEST_NO_ACCEPT"
)

// Main runs the squatter and exits when this process was started as one
// (by Start); otherwise it returns at once. Call it first in TestMain.
func Main() {
	addr, ok := os.LookupEnv(envListen)
	if !ok {
		return
	}
	o := Options{DeferAccept: os.Getenv(envDefer) != "", Device: os.Getenv(envDevice), NoAccept: os.Getenv(envNoAccept) != ""}
	if err := serve(addr, o); err != nil {
		fmt.Fprintln(os.Stderr, "squatter:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Request is what the squatter saw of one request.
type Request struct {
	Method        string `json:"method"`
	Path          string `json:"path"`
	Authorization string `json:"authorization,omitempty"`
	// Header is every header of the request.
	Header http.Header `json:"header,omitempty"`
}

// Carries reports whether any header of r has value among its values
// (a key a client sends in its own header, say).
func (r Request) Carries(value string) bool {
	for _, vs := range r.Header {
		for _, v := range vs {
			if strings.Contains(v, value) {
				return true
			}
		}
	}
	return strings.Contains(r.Authorization, value)
}

// line is one line of the squatter's stdout: a Request, or a count of
// bytes it read from a connection.
type line struct {
	Request
	Read int `json:"read,omitempty"`
}

// hello is the squatter's first line: where it listens, as whom.
type hello struct {
	Port int `json:"port"`
	UID  int `json:"uid"`
}

// serve listens on addr, prints hello, then one JSON Request per request
// on stdout, until stdin closes.
func serve(addr string, o Options) error {
	lc := net.ListenConfig{Control: func(network, address string, rc syscall.RawConn) error {
		if o.DeferAccept {
			if err := setDeferAccept(rc); err != nil {
				return fmt.Errorf("TCP_DEFER_ACCEPT: %w", err)
			}
		}
		if o.Device != "" {
			if err := bindToDevice(rc, o.Device); err != nil {
				return fmt.Errorf("SO_BINDTODEVICE %s: %w", o.Device, err)
			}
		}
		return nil
	}}
	tl, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	out := json.NewEncoder(os.Stdout)
	emit := func(v any) {
		mu.Lock()
		defer mu.Unlock()
		_ = out.Encode(v)
	}
	emit(hello{Port: tl.Addr().(*net.TCPAddr).Port, UID: os.Getuid()})
	read := func(n int) { emit(line{Read: n}) }
	if o.NoAccept {
		_, _ = io.Copy(io.Discard, os.Stdin) // the test closes it to stop us
		return drain(tl.(*net.TCPListener), read)
	}
	ln := countingListener{Listener: tl, read: read}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		emit(Request{Method: r.Method, Path: r.URL.Path, Authorization: auth, Header: r.Header})
		if auth == "" {
			w.Header().Set("WWW-Authenticate", `Basic realm="squatter"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"healthy":true,"version":"squatter"}`)
	})}
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin) // the test closes it to stop us
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// drain accepts the connections waiting in l's queue and reports what
// each carries, until none is left for a second.
func drain(l *net.TCPListener, read func(int)) error {
	for {
		if err := l.SetDeadline(time.Now().Add(time.Second)); err != nil {
			return err
		}
		c, err := l.AcceptTCP()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return l.Close()
		}
		if err != nil {
			return err
		}
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		n, _ := io.Copy(io.Discard, c)
		if n > 0 {
			read(int(n))
		}
		c.Close()
	}
}

// countingListener reports every read of its connections.
type countingListener struct {
	net.Listener
	read func(n int)
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, read: l.read}, nil
}

type countingConn struct {
	net.Conn
	read func(n int)
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.read(n)
	}
	return n, err
}

// Squatter is a listener held by the user nobody.
type Squatter struct {
	// Port is the port it listens on (on 127.0.0.1 unless Start was
	// given another address).
	Port int
	// UID is nobody's uid, as the squatter itself reported it.
	UID int

	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines *bufio.Scanner
	done  chan struct{}

	mu    sync.Mutex
	seen  []Request
	bytes int64
	once  sync.Once
}

// Start runs a squatter listening on addr ("127.0.0.1:0" for any port,
// "0.0.0.0:8787", "[::]:0", …) as the user nobody, and stops it when the
// test ends. It skips the test when it cannot run one.
func Start(t testing.TB, addr string) *Squatter {
	t.Helper()
	return start(t, addr, Options{})
}

// Options are socket options of the squatter's listener. Both are
// Linux's: StartWith skips the test elsewhere.
type Options struct {
	// DeferAccept sets TCP_DEFER_ACCEPT, as Bun (so OpenCode) does: a
	// connection to it stays a request socket, unaccepted, until its
	// first byte arrives.
	DeferAccept bool
	// Device binds the listener to a network device (SO_BINDTODEVICE,
	// which any user may set): it then shares its address and port with
	// listeners bound to other devices.
	Device string
	// NoAccept leaves every connection in the listener's accept queue
	// while the squatter runs, as a server too busy to accept. When it
	// stops it accepts them and reads what they carry, so Received and
	// Untouched count the bytes that reached it all the same.
	NoAccept bool
}

// StartWith is Start with the listener's Options.
func StartWith(t testing.TB, addr string, o Options) *Squatter {
	t.Helper()
	if (o.DeferAccept || o.Device != "") && !haveOptions {
		t.Skip("TCP_DEFER_ACCEPT and SO_BINDTODEVICE are Linux's")
	}
	return start(t, addr, o)
}

func start(t testing.TB, addr string, o Options) *Squatter {
	t.Helper()
	u := nobody.Lookup(t)
	_, bin := nobody.Binary(t, "squatter")
	cmd := u.Command(bin)
	cmd.Env = append(os.Environ(), envListen+"="+addr)
	if o.DeferAccept {
		cmd.Env = append(cmd.Env, envDefer+"=1")
	}
	if o.Device != "" {
		cmd.Env = append(cmd.Env, envDevice+"="+o.Device)
	}
	if o.NoAccept {
		cmd.Env = append(cmd.Env, envNoAccept+"=1")
	}
	cmd.Stderr = &prefixWriter{t: t}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the squatter: %v", err)
	}
	s := &Squatter{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout)}
	t.Cleanup(func() { s.Stop() })
	var h hello
	if !s.lines.Scan() || json.Unmarshal(s.lines.Bytes(), &h) != nil {
		s.Stop()
		t.Fatalf("the squatter did not start (%v)", s.lines.Err())
	}
	s.Port, s.UID = h.Port, h.UID
	if h.UID != u.UID {
		t.Fatalf("the squatter runs as uid %d, want nobody (%d)", h.UID, u.UID)
	}
	s.done = make(chan struct{})
	go s.read()
	return s
}

func (s *Squatter) read() {
	defer close(s.done)
	for s.lines.Scan() {
		var l line
		if json.Unmarshal(s.lines.Bytes(), &l) != nil {
			continue
		}
		s.mu.Lock()
		if l.Read > 0 {
			s.bytes += int64(l.Read)
		} else {
			s.seen = append(s.seen, l.Request)
		}
		s.mu.Unlock()
	}
}

// Stop ends the squatter and returns every request it received. Safe to
// call more than once.
func (s *Squatter) Stop() []Request {
	s.once.Do(func() {
		s.stdin.Close()
		exited := make(chan struct{})
		go func() {
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = s.cmd.Process.Kill() // wedged: do not hang the test
			}
		}()
		if s.done != nil {
			select {
			case <-s.done:
			case <-time.After(10 * time.Second):
			}
		}
		_ = s.cmd.Wait()
		close(exited)
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.seen...)
}

// Received is how many bytes the squatter read from every connection it
// accepted. After Stop it is all of them.
func (s *Squatter) Received() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// prefixWriter logs the squatter's stderr into the test's log.
type prefixWriter struct{ t testing.TB }

func (w *prefixWriter) Write(p []byte) (int, error) {
	w.t.Logf("squatter: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Refused fails t unless err is a keyed client's refusal to dial the
// squatter (portowner.Dialer's): it names the squatter's address and
// uid, the user nobody, what named the port (source, when not "") and
// says the credential was not sent.
func (s *Squatter) Refused(t testing.TB, err error, source string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error: the client used the port of uid %d", s.UID)
	}
	msg := err.Error()
	want := []string{
		"127.0.0.1:" + strconv.Itoa(s.Port) + " is held by uid " + strconv.Itoa(s.UID) + " (nobody)",
		"not by you",
		"the credential was not sent",
	}
	if source != "" {
		want = append(want, source+" is stale or another user took the port")
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q\ndoes not say %q", msg, w)
		}
	}
}

// Untouched stops the squatter and fails t if it received a single byte
// (so no request, no credential).
func (s *Squatter) Untouched(t testing.TB) {
	t.Helper()
	seen := s.Stop()
	if n := s.Received(); n != 0 || len(seen) != 0 {
		t.Errorf("the squatter (uid %d) received %d bytes: %+v", s.UID, n, seen)
	}
}
