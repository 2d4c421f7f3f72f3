package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hubdev/hub/geturl/engine/replay"
	"github.com/hubdev/hub/geturl/route"
)

// FuzzGateway sends arbitrary request-targets (with valid and invalid
// tokens spliced in) to the handler: it never panics, never answers 500,
// and every body is JSON or a range answer.
func FuzzGateway(f *testing.F) {
	e := newEnv(f)
	dir := f.TempDir()
	s := newSession(f, dir, route.Permissions{Write: true}, "A")
	e.table.Add(s)
	for _, seed := range []string{
		"/v0/init/AInit001", "/v0/ARead001/r?path=x", "/v0/ARead001/z?last=1", "/v0/AMut0001/r?path=a",
		"/v0/ARead001/s?path=a", "/v0/ARead001/k?plugin=%ZZ&raw=~u{D800}", "/v0/ARead001/t?path=../../etc",
		"/v0/ARead001/r?path=a&start=5&path=b&lines=3&end=2", "/v0//", "/v0/ARead001/g?raw=(", "http://h/v0/ARead001/k",
		"/v0/ARead001/read?path=x", "/v0/AMut0001/write?path=a&raw=b", "/v0/ARead001/manifest", "/v0/AMut0001/manifest",
		"/v0/ARead001/call?tool=read&content=eyJwYXRoIjoieCJ9", "/v0/AMut0001/call?tool=write&content=eyJwYXRoIjoieCIsInJhdyI6InkifQ",
		"/v0/ARead001/call?tool=grep&content=eyJwYXRoIjoieCIsInJhdyI6IngifQ==", "/v0/ARead001/call?tool=Read&content=e30",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, target string) {
		if len(target) == 0 || target[0] != '/' && target[0] != 'h' {
			return
		}
		req, err := http.NewRequest("GET", "http://127.0.0.1/", nil)
		if err != nil {
			return
		}
		req.Host = e.srv.Listener.Addr().String()
		req.RequestURI = target
		w := httptest.NewRecorder()
		e.gw.ServeHTTP(w, req)
		switch w.Code {
		case 200, 404:
		default:
			t.Fatalf("%q: status %d", target, w.Code)
		}
		b := w.Body.Bytes()
		if bytes.HasPrefix(b, []byte(replay.Header)) {
			if _, _, err := replay.Parse(b); err != nil {
				t.Fatalf("%q: bad range answer", target)
			}
			return
		}
		if !json.Valid(b) {
			t.Fatalf("%q: not JSON: %s", target, b)
		}
	})
}
