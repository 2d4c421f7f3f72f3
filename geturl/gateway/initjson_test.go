package gateway

import (
	"testing"

	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
	"github.com/hubdev/hub/hub/jsonw"
)

// TestInitContractEncoding: the contract's own encoder writes the bytes
// the reflective one does, for every shape of session (with and without
// a mutation base and file or terminal tools) and for strings that need
// escaping.
func TestInitContractEncoding(t *testing.T) {
	var contracts []*initContract
	for _, stubs := range []bool{false, true} {
		var e *env
		if stubs {
			e = newEnv(t, withMutationStubs)
		} else {
			e = newEnv(t)
		}
		for _, perm := range []route.Permissions{{}, {Write: true}, {Terminal: true}, {Write: true, Terminal: true}} {
			s := newSession(t, t.TempDir(), perm, "A")
			for _, origin := range []string{e.origin(), "https://marked-vision-brought-tommy.trycloudflare.com"} {
				contracts = append(contracts, e.gw.initContract(origin, s))
			}
		}
	}
	odd := "a<b>&c \"q\" \\ \n\t\x01 é \u2028 😀 \xff"
	contracts = append(contracts,
		&initContract{},
		&initContract{OK: true, Protocol: odd, Bases: route.Bases{Read: odd, Mutation: odd}, Endpoints: endpoints{{odd, odd, odd}, {"r", "m", ""}},
			Compat: odd, Root: odd, Project: odd, Permissions: permissions{true, true, true}, Fetch: odd, Rules: []string{odd, ""}})
	for _, c := range contracts {
		want, err := jsonw.Reflect(nil, c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := transport.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("contract encodes as\n%s\nwant\n%s", got, want)
		}
	}
}

// TestInitContractEncodingAllocs: Init answers every agent's first fetch;
// its contract is appended to the answer buffer without reflection's
// allocations.
func TestInitContractEncodingAllocs(t *testing.T) {
	e := newEnv(t, withMutationStubs)
	s := newSession(t, t.TempDir(), route.Permissions{Write: true, Terminal: true}, "A")
	c := e.gw.initContract(e.origin(), s)
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(50, func() { transport.AppendJSON(buf, c) }); n > 0 {
		t.Fatalf("encoding the Init contract allocates %v times, want none", n)
	}
}
