package gateway

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/engine/replay"
	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/kernel"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// testSession is an in-memory session generation over a real directory.
type testSession struct {
	scope   *sandbox.Scope
	perm    route.Permissions
	store   *replay.Store
	project string
	tokens  map[route.Capability]string
	cov     *files.Ledger
}

func (s *testSession) Scope() *sandbox.Scope           { return s.scope }
func (s *testSession) Permissions() route.Permissions  { return s.perm }
func (s *testSession) Replay() *replay.Store           { return s.store }
func (s *testSession) Coverage() route.Coverage        { return s.cov }
func (s *testSession) Project() string                 { return s.project }
func (s *testSession) Token(c route.Capability) string { return s.tokens[c] }

// newSession makes a session over dir with tokens derived from a seed
// letter, so tests can tell sessions apart.
func newSession(t testing.TB, dir string, perm route.Permissions, seed string) *testSession {
	t.Helper()
	sc, err := sandbox.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := &testSession{scope: sc, perm: perm, store: replay.New(nil), project: "demo", cov: &files.Ledger{},
		tokens: map[route.Capability]string{route.CapInit: seed + "Init001", route.CapRead: seed + "Read001"}}
	if perm.Mutations() {
		s.tokens[route.CapMutation] = seed + "Mut0001"
	}
	return s
}

// env is a gateway on an httptest server with its sessions.
type env struct {
	t     testing.TB
	srv   *httptest.Server
	gw    *Gateway
	k     *kernel.Kernel
	table *route.TokenTable
	port  int
	// publicOrigin is returned by the gateway's PublicOrigin option.
	publicOrigin string
}

func newEnv(t testing.TB, opts ...func(*kernel.Kernel)) *env {
	t.Helper()
	return newEnvWith(t, kernel.Options{}, opts...)
}

func newEnvWith(t testing.TB, ko kernel.Options, opts ...func(*kernel.Kernel)) *env {
	t.Helper()
	e := &env{t: t, k: kernel.New(ko), table: &route.TokenTable{}}
	for _, o := range opts {
		o(e.k)
	}
	e.srv = httptest.NewUnstartedServer(nil)
	e.port = e.srv.Listener.Addr().(*net.TCPAddr).Port
	e.gw = New(Options{Sessions: e.table, Kernel: e.k, Port: e.port, PublicOrigin: func() string { return e.publicOrigin }})
	e.srv.Config.Handler = e.gw
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	return e
}

// withMutationStubs serves the mutation routes with a handler that only
// says which route ran, so base repairs and Init can be tested before the
// mutation kernel exists.
func withMutationStubs(k *kernel.Kernel) {
	for _, r := range k.Routes() {
		if r.Base == route.MutationBase {
			path := r.Path
			k.Handle(path, &transport.Spec{Route: path, Params: []transport.Param{{Name: "path"}, transport.WaitParam(), {Name: "old"}, {Name: "new"}, {Name: "blob"}, {Name: "i", Kind: transport.Int, Max: 63}, {Name: "count", Kind: transport.Int, Min: 1, Max: 64}, transport.CallParam()}, Raw: true},
				func(context.Context, *route.Call) (any, *transport.Error) {
					return map[string]any{"ok": true, "stub": path}, nil
				})
		}
	}
}

type response struct {
	status int
	header http.Header
	body   string
}

// get fetches a request-target from the gateway as written, with an
// optional Host override.
func (e *env) get(target string, host ...string) response {
	e.t.Helper()
	return e.do(http.MethodGet, target, host...)
}

func (e *env) do(method, target string, host ...string) response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.URL = &url.URL{Scheme: "http", Host: e.srv.Listener.Addr().String(), Opaque: target}
	if len(host) > 0 {
		req.Host = host[0]
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func (e *env) origin() string { return "http://127.0.0.1:" + strconv.Itoa(e.port) }
