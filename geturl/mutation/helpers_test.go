package mutation_test

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/engine/replay"
	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/gateway"
	"github.com/hubdev/hub/geturl/kernel"
	"github.com/hubdev/hub/geturl/mutation"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// testSession is a session generation over a real directory, with its
// mutation state.
type testSession struct {
	scope  *sandbox.Scope
	perm   route.Permissions
	store  *replay.Store
	tokens map[route.Capability]string
	state  *mutation.State
}

func (s *testSession) Scope() *sandbox.Scope          { return s.scope }
func (s *testSession) Permissions() route.Permissions { return s.perm }
func (s *testSession) Replay() *replay.Store          { return s.store }
func (s *testSession) Coverage() route.Coverage       { return s.state.Ledger }
func (s *testSession) Project() string                { return "demo" }
func (s *testSession) Token(c route.Capability) string {
	return s.tokens[c]
}
func (s *testSession) Mutations() *mutation.State { return s.state }

// env is a project served by a real gateway with the mutation kernel
// installed, plus a directory outside the project that escapes aim at.
type env struct {
	t       testing.TB
	root    string // canonical
	outside string // canonical
	host    *mutation.Host
	k       *kernel.Kernel
	srv     *httptest.Server
	table   *route.TokenTable
	sess    *testSession
	r, m    string // the session's bases
	// resolver is what the sessions' scopes open paths with.
	resolver sandbox.Resolver
}

func newEnv(t testing.TB, perm route.Permissions, tree map[string]string) *env {
	t.Helper()
	return newEnvWith(t, perm, mutation.Options{}, tree)
}

func newEnvWith(t testing.TB, perm route.Permissions, o mutation.Options, tree map[string]string) *env {
	t.Helper()
	return newEnvOn(t, sandbox.Default(), perm, o, tree)
}

// newEnvOn is newEnvWith whose sessions open paths with resolver r: the
// escape suites run once per resolver the OS offers.
func newEnvOn(t testing.TB, r sandbox.Resolver, perm route.Permissions, o mutation.Options, tree map[string]string) *env {
	t.Helper()
	e := &env{t: t, root: realDir(t, t.TempDir()), outside: realDir(t, t.TempDir()), table: &route.TokenTable{}, resolver: r}
	writeTree(t, e.root, tree)
	e.host = mutation.NewHost(o)
	e.k = kernel.New(kernel.Options{Mutations: e.host, NoRG: true, NoVersions: true})
	e.srv = httptest.NewUnstartedServer(nil)
	port := e.srv.Listener.Addr().(*net.TCPAddr).Port
	e.srv.Config.Handler = gateway.New(gateway.Options{Sessions: e.table, Kernel: e.k, Port: port})
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	e.sess = e.newSession(perm, "A")
	origin := "http://127.0.0.1:" + strconv.Itoa(port)
	e.r = origin + "/v0/" + e.sess.tokens[route.CapRead]
	if tok := e.sess.tokens[route.CapMutation]; tok != "" {
		e.m = origin + "/v0/" + tok
	}
	return e
}

func (e *env) newSession(perm route.Permissions, seed string) *testSession {
	sc, err := sandbox.NewWith(e.root, e.resolver)
	if err != nil {
		e.t.Fatal(err)
	}
	s := &testSession{scope: sc, perm: perm, store: replay.New(nil), state: mutation.NewState(&files.Ledger{}, nil),
		tokens: map[route.Capability]string{route.CapInit: seed + "Init001", route.CapRead: seed + "Read001"}}
	if perm.Mutations() {
		s.tokens[route.CapMutation] = seed + "Mut0001"
	}
	e.table.Add(s)
	return s
}

func realDir(t testing.TB, d string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(d)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// writeTree writes files under dir; "->x" makes a symlink to x, a name
// ending in / a directory.
func writeTree(t testing.TB, dir string, tree map[string]string) {
	t.Helper()
	for name, body := range tree {
		full := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			os.MkdirAll(full, 0o755)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(body, "->"); ok {
			if err := os.Symlink(target, full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// get fetches a URL exactly as written (no client-side re-encoding) and
// returns the body, failing on anything but HTTP 200.
func (e *env) get(u string) string {
	e.t.Helper()
	code, body := e.fetch(u)
	if code != 200 {
		e.t.Fatalf("GET %s: %d %s", u, code, body)
	}
	// An answer may echo a path the agent sent, never reveal one.
	for _, h := range []string{e.root, e.outside} {
		if strings.Contains(body, h) && !strings.Contains(transport.Decode(u), h) {
			e.t.Fatalf("answer leaks host path %s: %s", h, body)
		}
	}
	return body
}

func (e *env) fetch(u string) (int, string) {
	e.t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		e.t.Fatal(err)
	}
	rest := strings.TrimPrefix(u, pu.Scheme+"://"+pu.Host)
	req, _ := http.NewRequest("GET", e.srv.URL, nil)
	req.URL = &url.URL{Scheme: "http", Host: pu.Host, Opaque: rest}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// answer is the union of the fields tests look at.
type answer struct {
	OK            bool            `json:"ok"`
	Call          string          `json:"call"`
	Tool          string          `json:"tool"`
	State         string          `json:"state"`
	Replayed      bool            `json:"replayed"`
	Replays       int             `json:"replays"`
	Result        json.RawMessage `json:"result"`
	ResultEvicted bool            `json:"resultEvicted"`
	Poll          string          `json:"poll"`
	Repeat        string          `json:"repeat"`
	Retry         string          `json:"retry"`
	Repair        string          `json:"repair"`
	ErrorCode     string          `json:"errorCode"`
	ErrorDetail   string          `json:"errorDetail"`
	Retryable     bool            `json:"retryable"`
	AgentAction   string          `json:"agentAction"`
	StatusURL     string          `json:"statusUrl"`
	Complete      bool            `json:"complete"`
	Duplicate     bool            `json:"duplicate"`
	Snapshot      bool            `json:"snapshot"`
	Missing       []int           `json:"missing"`
	Received      []int           `json:"received"`
	Preview       string          `json:"preview"`
	raw           string
}

func (e *env) do(u string) answer {
	e.t.Helper()
	body := e.get(u)
	var a answer
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		e.t.Fatalf("GET %s: %v in %s", u, err, body)
	}
	a.raw = body
	return a
}

// ok fetches u and requires ok:true.
func (e *env) ok(u string) answer {
	e.t.Helper()
	a := e.do(u)
	if !a.OK {
		e.t.Fatalf("GET %s: %s", u, a.raw)
	}
	return a
}

// settled fetches u and, while the intent is still pending or running
// (wait= ran out first, as it does on a loaded machine), follows its poll
// URL as an agent would: a bounded number of times, with no clock.
func (e *env) settled(u string) answer {
	e.t.Helper()
	a := e.do(u)
	for i := 0; i < 100 && (a.State == "pending" || a.State == "running") && a.Poll != ""; i++ {
		a = e.do(a.Poll)
	}
	return a
}

// done fetches u and requires a succeeded intent.
func (e *env) done(u string) answer {
	e.t.Helper()
	a := e.settled(u)
	if !a.OK {
		e.t.Fatalf("GET %s: %s", u, a.raw)
	}
	if a.State != "succeeded" {
		e.t.Fatalf("GET %s: state %s: %s", u, a.State, a.raw)
	}
	return a
}

// fail fetches u and requires errorCode code.
func (e *env) fail(u, code string) answer {
	e.t.Helper()
	a := e.settled(u)
	if a.OK || a.ErrorCode != code {
		e.t.Fatalf("GET %s: want %s, got %s", u, code, a.raw)
	}
	return a
}

func (e *env) file(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.root, rel))
	if err != nil {
		e.t.Fatalf("read %s: %v", rel, err)
	}
	return string(b)
}

func (e *env) missing(rel string) bool {
	_, err := os.Lstat(filepath.Join(e.root, rel))
	return errors.Is(err, fs.ErrNotExist)
}

var rw = route.Permissions{Write: true, Terminal: true}
