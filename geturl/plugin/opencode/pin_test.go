package opencode

import (
	"context"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/hubdev/hub/geturl/plugin"
)

// fakeOC is a minimal OpenCode: /global/health, optional Basic auth, an
// optional declared instance id, and a log of what each request carried.
type fakeOC struct {
	*httptest.Server
	password string

	mu       sync.Mutex
	instance string
	log      []seen
}

type seen struct {
	path   string
	auth   string
	expect string
}

func newFakeOC(t *testing.T, password, instance string) *fakeOC {
	f := &fakeOC{password: password, instance: instance}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.log = append(f.log, seen{r.URL.Path, r.Header.Get("Authorization"), r.Header.Get(HeaderExpectInstance)})
		inst := f.instance
		f.mu.Unlock()
		if inst != "" {
			w.Header().Set(HeaderInstance, inst)
		}
		if f.password != "" {
			want := "Basic " + base64.StdEncoding.EncodeToString([]byte("opencode:"+f.password))
			if r.Header.Get("Authorization") != want {
				w.Header().Set("WWW-Authenticate", `Basic realm="Secure Area"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
		}
		switch r.URL.Path {
		case "/global/health":
			w.Write([]byte(`{"healthy":true,"version":"9.9.9"}`))
		case "/agent":
			w.Write([]byte(`[{"name":"build","mode":"primary"}]`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeOC) setInstance(v string) {
	f.mu.Lock()
	f.instance = v
	f.mu.Unlock()
}

func (f *fakeOC) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.log...)
}

// owner is a stub ProcessOwner the test can switch.
type owner struct {
	mu    sync.Mutex
	pid   int
	start string
	err   error
}

func (o *owner) get(string, int) (int, string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.pid, o.start, o.err
}

func (o *owner) set(pid int, start string) {
	o.mu.Lock()
	o.pid, o.start = pid, start
	o.mu.Unlock()
}

func fakePlugin(t *testing.T, url string, o ProcessOwner, mod func(*Config)) *Plugin {
	cfg := NewConfig()
	cfg.URL = url
	if mod != nil {
		mod(&cfg)
	}
	if o == nil {
		o = (&owner{err: errNoOwner}).get
	}
	return New(cfg, Options{Owner: o})
}

func TestPinServerInstance(t *testing.T) {
	f := newFakeOC(t, "pw", "inst-A")
	p := fakePlugin(t, f.URL, nil, func(c *Config) { c.DeviceToken = "pw" })
	auth := plugin.Authority{Root: t.TempDir()}

	out := callOK(t, p, auth, ToolInfo, `{"action":"status"}`)
	if str(out, "state") != StateReady || str(out, "instance", "pinning") != "server" {
		t.Fatalf("status = %v", out)
	}
	callOK(t, p, auth, ToolInfo, `{"action":"agents"}`)
	log := f.requests()
	if log[0].auth != "" {
		t.Fatal("the identity probe carried a credential")
	}
	for _, r := range log[1:] {
		if r.path == "/agent" && (r.auth == "" || r.expect != "inst-A") {
			t.Fatalf("pinned request = %+v", r)
		}
	}

	// Another process behind the port: refused, and stays refused even if
	// the first identity comes back.
	f.setInstance("inst-B")
	if e := callErr(t, p, auth, ToolInfo, `{"action":"agents"}`); e.Code != CodeInstanceChanged {
		t.Fatalf("after change = %v", e)
	}
	f.setInstance("inst-A")
	if e := callErr(t, p, auth, ToolInfo, `{"action":"agents"}`); e.Code != CodeInstanceChanged {
		t.Fatalf("fail closed = %v", e)
	}
	if st := p.Status(context.Background()); st != StateChanged {
		t.Fatalf("Status = %s", st)
	}
}

func TestPinProcess(t *testing.T) {
	f := newFakeOC(t, "pw", "")
	o := &owner{pid: 100, start: "5000"}
	p := fakePlugin(t, f.URL, o.get, func(c *Config) { c.BootstrapPassword = "pw" })
	auth := plugin.Authority{Root: t.TempDir()}

	out := callOK(t, p, auth, ToolInfo, `{"action":"status"}`)
	if str(out, "state") != StateReady || str(out, "instance", "pinning") != "process" || dig(out, "auth", "paired") != true {
		t.Fatalf("status = %v", out)
	}
	if p.client.bootstrap != "" {
		t.Fatal("the bootstrap password outlived pairing")
	}
	callOK(t, p, auth, ToolInfo, `{"action":"agents"}`)
	before := len(f.requests())

	// The pid was reused by another process (new start time): the next
	// connection is refused before a byte is written.
	o.set(100, "7777")
	p.client.closeIdle()
	if e := callErr(t, p, auth, ToolInfo, `{"action":"agents"}`); e.Code != CodeInstanceChanged {
		t.Fatalf("after change = %v", e)
	}
	if n := len(f.requests()); n != before {
		t.Fatalf("%d requests reached the changed process", n-before)
	}
	o.set(100, "5000")
	if e := callErr(t, p, auth, ToolInfo, `{"action":"agents"}`); e.Code != CodeInstanceChanged {
		t.Fatalf("fail closed = %v", e)
	}
}

func TestPinChangesDuringProbe(t *testing.T) {
	f := newFakeOC(t, "", "")
	calls := 0
	var mu sync.Mutex
	flip := func(string, int) (int, string, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return 100 + calls, "1", nil // a different owner at every look
	}
	p := fakePlugin(t, f.URL, flip, nil)
	out := callOK(t, p, plugin.Authority{Root: t.TempDir()}, ToolInfo, `{"action":"status"}`)
	if str(out, "state") != StateChanged {
		t.Fatalf("status = %v", out)
	}
}

func TestNeedsAuth(t *testing.T) {
	f := newFakeOC(t, "right", "")
	for _, tc := range []struct {
		name  string
		mod   func(*Config)
		state string
	}{
		{"nothing configured", nil, StateNeedAuth},
		{"wrong token", func(c *Config) { c.DeviceToken = "wrong-secret" }, StateNeedAuth},
		{"wrong password", func(c *Config) { c.BootstrapPassword = "wrong-secret" }, StateNeedAuth},
		{"token", func(c *Config) { c.DeviceToken = "right" }, StateReady},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := fakePlugin(t, f.URL, nil, tc.mod)
			auth := plugin.Authority{Root: t.TempDir()}
			out := callOK(t, p, auth, ToolInfo, `{"action":"status"}`)
			if str(out, "state") != tc.state {
				t.Fatalf("status = %v", out)
			}
			_, err := callTool(p, auth, ToolInfo, `{"action":"agents"}`)
			if (tc.state == StateReady) != (err == nil) {
				t.Fatalf("agents err = %v", err)
			}
			if err != nil && (strings.Contains(err.Error(), "wrong-secret") || !strings.Contains(err.Error(), CodeNeedsAuth)) {
				t.Fatalf("agents err = %v", err)
			}
		})
	}
	for _, r := range f.requests() {
		if strings.Contains(r.path, "secret") {
			t.Fatal("a secret reached a URL")
		}
	}
}

func TestUnauthenticatedServerGetsNoCredential(t *testing.T) {
	f := newFakeOC(t, "", "")
	p := fakePlugin(t, f.URL, nil, func(c *Config) { c.DeviceToken = "tok" })
	auth := plugin.Authority{Root: t.TempDir()}
	callOK(t, p, auth, ToolInfo, `{"action":"agents"}`)
	for _, r := range f.requests() {
		if r.auth != "" {
			t.Fatalf("%s carried a credential the server never asked for", r.path)
		}
	}
}

func TestOffline(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p := fakePlugin(t, "http://"+addr, nil, nil)
	auth := plugin.Authority{Root: t.TempDir()}
	if out := callOK(t, p, auth, ToolInfo, `{"action":"status"}`); str(out, "state") != StateOffline {
		t.Fatalf("status = %v", out)
	}
	if e := callErr(t, p, auth, ToolInfo, `{"action":"agents"}`); e.Code != CodeOffline || !e.Retryable {
		t.Fatalf("agents = %v", e)
	}
}

func TestLazyAndLoopbackOnly(t *testing.T) {
	f := newFakeOC(t, "", "")
	p := fakePlugin(t, f.URL, nil, nil)
	_ = p.Tools()
	_, _ = p.Classify(ToolWorker, []byte(`{"action":"start","prompt":"x"}`))
	if n := len(f.requests()); n != 0 {
		t.Fatalf("constructing and classifying made %d requests", n)
	}
	remote := fakePlugin(t, "http://example.com:4096", nil, nil)
	if e := callErr(t, remote, plugin.Authority{Root: t.TempDir()}, ToolInfo, `{"action":"status"}`); e.Code != CodeNotLoopback {
		t.Fatalf("remote = %v", e)
	}
	off := fakePlugin(t, f.URL, nil, func(c *Config) { c.Enabled = false })
	if e := callErr(t, off, plugin.Authority{Root: t.TempDir()}, ToolInfo, `{"action":"status"}`); e.Code != CodeDisabled {
		t.Fatalf("disabled = %v", e)
	}
	if off.Status(context.Background()) != StateDisabled {
		t.Fatal("disabled Status")
	}
}

// TestProcListenerOwner finds this very process behind an in-process
// listener, the real /proc lookup the process pin uses.
func TestProcListenerOwner(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("listener owners are read from /proc")
	}
	for _, network := range []string{"tcp4", "tcp6"} {
		host := map[string]string{"tcp4": "127.0.0.1", "tcp6": "::1"}[network]
		l, err := net.Listen(network, net.JoinHostPort(host, "0"))
		if err != nil {
			t.Logf("%s: %v", network, err)
			continue
		}
		port := l.Addr().(*net.TCPAddr).Port
		pid, start, err := procListenerOwner(host, port)
		if err != nil || pid != os.Getpid() || start == "" {
			t.Errorf("%s: owner = %d %q %v, want %d", network, pid, start, err, os.Getpid())
		}
		l.Close()
		if _, _, err := procListenerOwner(host, port); !errors.Is(err, errNoOwner) {
			t.Errorf("%s: closed listener still owned: %v", network, err)
		}
	}
}
