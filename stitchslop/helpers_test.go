package stitchslop

import (
	"encoding/json"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

// Helpers the shared harness does not have: a bridge configured for tests,
// and a scripted Stitch Slop page.

// ownTools are the bridge's own MCP tools, as tools/list shows them first.
const ownTools = "wait_for_connection,pair,connection_status,call,call_with_file,call_to_files"

const (
	testOrigin = "https://www.stitchslop.test"
	testToken  = "tok_test-bootstrap-token"
	frameWait  = 5 * time.Second
)

type bridge struct {
	*adaptertest.Harness
	S *Server
}

// startBridge runs a bridge on an OS-chosen port with the test token armed
// and a config dir inside the harness's temp HOME.
func startBridge(t testing.TB, mod func(*Config), hopts ...adaptertest.Options) *bridge {
	t.Helper()
	o := Config{Origin: testOrigin, Ports: []int{0}, ConfigDir: "~/.stitchslop", Token: testToken,
		Limits: Limits{ProbeTimeout: 300 * time.Millisecond}}
	if mod != nil {
		mod(&o)
	}
	s, err := New(&o)
	if err != nil {
		t.Fatal(err)
	}
	var ho adaptertest.Options
	if len(hopts) > 0 {
		ho = hopts[0]
	}
	h := adaptertest.Start(t, s, ho)
	return &bridge{Harness: h, S: s}
}

// run is the bridge's current run.
func (b *bridge) run() *run { return b.S.cur.Load() }

func (b *bridge) configDir() string { return filepath.Join(b.Dirs.Home, ".stitchslop") }

// control sends a keyed control-plane request.
func (b *bridge) control(method, path, body string) adaptertest.Response {
	b.T.Helper()
	hdr := map[string][]string{KeyHeader: {b.S.Key()}}
	return b.Do(adaptertest.Request{Method: method, Path: path, Body: []byte(body), Header: hdr})
}

// page is a scripted Stitch Slop tab.
type page struct {
	t testing.TB
	*adaptertest.WSClient
}

func (b *bridge) dialPage(o adaptertest.DialOptions) *page {
	b.T.Helper()
	if o.Origin == "" {
		o.Origin = testOrigin
	}
	c := b.MustDial("/", o)
	return &page{t: b.T, WSClient: c}
}

func (p *page) send(v any) {
	p.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		p.t.Fatal(err)
	}
	if err := p.SendText(string(b)); err != nil {
		p.t.Fatalf("send: %v", err)
	}
}

// next reads the next text frame as a JSON object.
func (p *page) next() map[string]any {
	p.t.Helper()
	m, err := p.Next(frameWait)
	if err != nil {
		p.t.Fatalf("waiting for a frame: %v", err)
	}
	var v map[string]any
	if err := json.Unmarshal(m.Data, &v); err != nil {
		p.t.Fatalf("frame is not a JSON object: %q", m.Data)
	}
	return v
}

// expectClosed waits for the server to close the socket.
func (p *page) expectClosed() {
	p.t.Helper()
	select {
	case <-p.Closed():
	case <-time.After(frameWait):
		p.t.Fatal("the bridge did not close the socket")
	}
}

// attach dials, authenticates with hs and returns the page and hello.
func (b *bridge) attach(hs map[string]any) (*page, map[string]any) {
	b.T.Helper()
	p := b.dialPage(adaptertest.DialOptions{})
	p.send(hs)
	hello := p.next()
	if hello["hello"] != ServerName {
		b.T.Fatalf("expected hello, got %v", hello)
	}
	b.waitConnected(true)
	return p, hello
}

func (b *bridge) waitConnected(want bool) {
	b.T.Helper()
	deadline := time.Now().Add(frameWait)
	for time.Now().Before(deadline) {
		if b.S.attached() == want {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	b.T.Fatalf("connected never became %v", want)
}

// serve answers commands with answer(command, args) until the socket closes.
func (p *page) serve(answer func(cmd string, args map[string]any) map[string]any) {
	go func() {
		for {
			m, err := p.Next(time.Hour)
			if err != nil {
				return
			}
			var f map[string]any
			if json.Unmarshal(m.Data, &f) != nil || f["id"] == nil {
				continue
			}
			args, _ := f["args"].(map[string]any)
			reply := answer(f["command"].(string), args)
			if reply == nil {
				continue
			}
			reply["id"] = f["id"]
			b, _ := json.Marshal(reply)
			p.SendText(string(b))
		}
	}()
}

func mustJSON(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %q: %v", b, err)
	}
	return v
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp4", hub.LoopbackHost+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// listenOn holds a loopback port busy for the test.
func listenOn(t testing.TB, port int) int {
	t.Helper()
	ln, err := net.Listen("tcp4", hub.LoopbackHost+":"+itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// netInterfaceAddrs lists this host's non-loopback IPv4 addresses.
func netInterfaceAddrs() ([]string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() {
			out = append(out, ipn.IP.String())
		}
	}
	return out, nil
}

// testEnv is an Env for calling Serve directly.
func testEnv(t testing.TB) *adapters.Env {
	dirs := adaptertest.TempDirs(t)
	return &adapters.Env{Log: adaptertest.Logger(t), Dirs: dirs, Ready: func(...int) {}}
}

// waitBlockedIn waits until some goroutine's stack is inside fn (for
// instance a wait that must already be blocking before the page attaches),
// instead of sleeping and hoping the scheduler got there.
func waitBlockedIn(t testing.TB, fn string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	adaptertest.WaitFor(t, "a goroutine blocked in "+fn, func() bool {
		n := runtime.Stack(buf, true)
		return strings.Contains(string(buf[:n]), fn)
	})
}
