package gateway

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/route"
)

// FuzzCallContent sends arbitrary JSON (and arbitrary content= text) to
// /call for every tool on both bases: the gateway never panics, answers
// 200 with JSON, and an answer on the read base never names the mutation
// or Init token, whatever the decoder made of the bytes.
func FuzzCallContent(f *testing.F) {
	e := newEnv(f, withMutationStubs)
	s := newSession(f, f.TempDir(), route.Permissions{Write: true, Terminal: true}, "A")
	e.table.Add(s)
	var tools []string
	for _, rt := range e.k.Routes() {
		tools = append(tools, rt.Tool)
	}
	for _, seed := range []string{
		`{"path":"a"}`, `{"path":["a","b"],"start":1}`, `{"raw":"x","wait":1500}`, `{"path":"a","file":"a"}`,
		`{"pth":"a"}`, `{"raw":"\ud800"}`, `{"a":null}`, `{"a":{"b":1}}`, `[]`, `{"plugin":"p","tool":"t","raw":"{}"}`,
	} {
		f.Add(uint8(0), false, seed, false)
	}
	f.Add(uint8(3), true, "eyJwYXRoIjoieCJ9==", true)
	f.Add(uint8(8), true, "+/+/", true)
	f.Fuzz(func(t *testing.T, tool uint8, mut bool, body string, verbatim bool) {
		c := body
		if !verbatim {
			c = base64.RawURLEncoding.EncodeToString([]byte(body))
		}
		tok := s.Token(route.CapRead)
		if mut {
			tok = s.Token(route.CapMutation)
		}
		target := "/v0/" + tok + "/call?tool=" + tools[int(tool)%len(tools)] + "&content=" + c
		req, err := http.NewRequest("GET", "http://127.0.0.1/", nil)
		if err != nil {
			return
		}
		req.Host = e.srv.Listener.Addr().String()
		req.RequestURI = target
		w := httptest.NewRecorder()
		e.gw.ServeHTTP(w, req)
		if w.Code != 200 {
			t.Fatalf("%q: status %d", target, w.Code)
		}
		b := w.Body.String()
		if !json.Valid([]byte(b)) && !strings.HasPrefix(b, "GETMCP_RANGE") {
			t.Fatalf("%q: not JSON: %s", target, b)
		}
		if strings.Contains(b, s.Token(route.CapInit)) || (!mut && strings.Contains(b, s.Token(route.CapMutation))) {
			t.Fatalf("%q names a stronger token: %s", target, b)
		}
	})
}
