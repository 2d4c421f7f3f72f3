package transport

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hubdev/hub/geturl/internal/corpus"
)

// echoSpec takes a text through both transports at once: a parameter value
// and the raw tail.
var echoSpec = &Spec{
	Route:  "/w",
	Params: []Param{{Name: "path", AllowEmpty: true, Required: true}},
	Raw:    true,
}

type echoed struct {
	Path []byte `json:"path"`
	Raw  []byte `json:"raw"`
}

// echoServer decodes the request-target exactly as net/http delivers it and
// answers with the decoded bytes.
func echoServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tg, err := ParseTarget(r.RequestURI)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		a, err := Bind(tg, echoSpec, "")
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		raw, _ := a.Raw()
		json.NewEncoder(w).Encode(echoed{Path: []byte(a.Text("path")), Raw: []byte(raw)})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// viaClient sends target with Go's HTTP client.
func viaClient(t *testing.T, srv *httptest.Server, target string) (echoed, bool) {
	resp, err := http.Get(srv.URL + target)
	if err != nil {
		t.Errorf("client: %v", err)
		return echoed{}, false
	}
	defer resp.Body.Close()
	return readEcho(t, resp)
}

// viaSocket writes the request line byte for byte, as any HTTP client on
// the far side of a tunnel could.
func viaSocket(t *testing.T, srv *httptest.Server, target string) (echoed, bool) {
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET "+target+" HTTP/1.1\r\nHost: "+srv.Listener.Addr().String()+"\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Errorf("socket: %v", err)
		return echoed{}, false
	}
	defer resp.Body.Close()
	return readEcho(t, resp)
}

func readEcho(t *testing.T, resp *http.Response) (echoed, bool) {
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Errorf("status %d: %s", resp.StatusCode, b)
		return echoed{}, false
	}
	var e echoed
	if err := json.Unmarshal(b, &e); err != nil {
		t.Errorf("answer: %v", err)
		return echoed{}, false
	}
	return e, true
}

// TestCorpusRoundTripsOverHTTP sends every corpus text, encoded, through a
// real HTTP request-target (after each hostile rewrite) as both a parameter
// value and the raw tail, and requires the exact bytes back.
func TestCorpusRoundTripsOverHTTP(t *testing.T) {
	srv := echoServer(t)
	cases := corpus.Cases(t)
	for _, c := range cases {
		if !utf8.ValidString(c.Text) {
			t.Fatalf("%s: corpus texts are valid UTF-8", c.Name)
		}
		enc := Encode(c.Text)
		for _, h := range hostile {
			v := h.f(enc)
			target := "/v0/AbCd1234/w?path=" + v + "&raw=" + v
			for _, send := range []struct {
				name string
				f    func(*testing.T, *httptest.Server, string) (echoed, bool)
			}{{"client", viaClient}, {"socket", viaSocket}} {
				got, ok := send.f(t, srv, target)
				if !ok {
					t.Errorf("%s / %s / %s: not delivered", c.Name, h.name, send.name)
					continue
				}
				if string(got.Path) != c.Text || string(got.Raw) != c.Text {
					t.Errorf("%s / %s / %s:\n path %q\n raw  %q\n want %q", c.Name, h.name, send.name, got.Path, got.Raw, c.Text)
				}
			}
		}
	}
}

// TestCorpusLiteralEscapesSurvive: the corpus's escape lookalikes must reach
// the tool as the literal text, never as what they look like.
func TestCorpusLiteralEscapesSurvive(t *testing.T) {
	for _, c := range corpus.Cases(t) {
		if strings.Contains(c.Text, "~") && Decode(Encode(c.Text)) != c.Text {
			t.Errorf("%s: escape lookalike changed", c.Name)
		}
	}
}
