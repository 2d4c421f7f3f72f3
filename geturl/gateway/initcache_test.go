package gateway

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
	"github.com/hubdev/hub/internal/race"
)

// TestInitAnswerFollowsSession: Init is answered from rendered answers,
// and each answer is exactly the contract rendered for the session as it
// is now, through the origin the agent used: a rotated generation, changed
// permissions, a renamed project or another origin never get an older
// answer, and more sessions than the cache holds are all answered right.
func TestInitAnswerFollowsSession(t *testing.T) {
	e := newEnv(t, withMutationStubs)
	e.publicOrigin = "https://marked-vision-brought-tommy.trycloudflare.com"
	s := newSession(t, t.TempDir(), route.Permissions{}, "A")
	e.table.Add(s)
	check := func(s *testSession, host string) {
		t.Helper()
		origin := e.origin()
		if host != "" {
			origin = "https://" + host
		}
		want, err := transport.Marshal(e.gw.initContract(origin, s))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // a miss, then a hit
			var r response
			if host == "" {
				r = e.get("/v0/init/" + s.Token(route.CapInit))
			} else {
				r = e.get("/v0/init/"+s.Token(route.CapInit), host)
			}
			if r.status != http.StatusOK || r.body != string(want) {
				t.Fatalf("Init answered %d\n%s\nwant\n%s", r.status, r.body, want)
			}
			if got := r.header.Get("Content-Length"); got != strconv.Itoa(len(want)) {
				t.Fatalf("Content-Length %q, want %d", got, len(want))
			}
		}
	}
	check(s, "")
	check(s, "marked-vision-brought-tommy.trycloudflare.com")
	s.perm = route.Permissions{Write: true, Terminal: true} // permissions granted: a mutation base appears
	s.tokens[route.CapMutation] = "AMut0001"
	e.table.Add(s)
	check(s, "")
	s.perm.Terminal = false
	check(s, "")
	s.project = "renamed"
	check(s, "")
	s.tokens[route.CapRead] = "ARead002" // rotated: same Init token, new read token
	check(s, "")
	for i := range initSlots + 3 {
		o := newSession(t, t.TempDir(), route.Permissions{Write: i%2 == 0}, fmt.Sprintf("S%02d", i))
		e.table.Add(o)
		check(o, "")
	}
	check(s, "")
}

// TestInitAllocs: Init, every agent's first fetch, is served from its
// rendered answer: the handler allocates nothing of its own (the one
// allocation is the token table's copy of the token).
func TestInitAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	e := newEnv(t, withMutationStubs)
	s := newSession(t, t.TempDir(), route.Permissions{Write: true, Terminal: true}, "A")
	e.table.Add(s)
	req := httptestRequest(e, "/v0/init/"+s.Token(route.CapInit))
	w := &discardWriter{h: http.Header{}}
	serve := func() {
		clear(w.h)
		e.gw.ServeHTTP(w, req)
	}
	serve()
	if w.status != http.StatusOK || w.n == 0 {
		t.Fatalf("Init answered %d with %d bytes", w.status, w.n)
	}
	if n := testing.AllocsPerRun(100, serve); n > 1 {
		t.Fatalf("serving Init allocates %v times, want at most 1", n)
	}
}
