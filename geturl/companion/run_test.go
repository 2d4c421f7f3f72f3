package companion

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/session"
)

// Run, on its own (no heartbeat, no data-plane request), ends a binding
// whose lease ran out within a third of a lease after the expiry and
// deletes its session; a binding kept alive by heartbeats stays.
func TestRunEndsExpiredBindings(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	os.Mkdir(proj, 0o755)
	synctest.Test(t, func(t *testing.T) {
		mgr, err := session.Open(session.Options{Path: filepath.Join(dir, "registry.json")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mgr.AddProject(proj, "ro", route.Permissions{}); err != nil {
			t.Fatal(err)
		}
		svc := Open(Options{Path: filepath.Join(dir, FileName), Sessions: mgr, Lease: testLease, ControlPort: testPort,
			Log: slog.New(slog.DiscardHandler), Prompt: func(tok string) string { return tok }})
		call := func(method, path, auth, body string) answer {
			r := httptest.NewRequest(method, path, strings.NewReader(body))
			r.Host, r.Header["Origin"] = "127.0.0.1:47433", []string{testOrigin}
			if auth != "" {
				r.Header.Set("Authorization", "Bearer "+auth)
			}
			w := httptest.NewRecorder()
			svc.Handler().ServeHTTP(w, r)
			a := answer{status: w.Code, raw: w.Body.String()}
			jsonUnmarshal(w.Body.Bytes(), &a.body)
			return a
		}
		p := pairing{secret: newSecret()}
		a := call("POST", "/companion/pair", "", `{"name":"x","secret":"`+p.secret+`"}`)
		p.request, p.device = a.str("request"), a.str("device")
		if err := svc.Approve(p.request); err != nil {
			t.Fatal(err)
		}
		bind := func(conv string) (string, string) {
			a := call("POST", "/companion/bind", p.cred(), `{"project":"ro","conversation":"https://chat.example/`+conv+`"}`)
			if a.status != http.StatusCreated {
				t.Fatalf("bind: %s", a.raw)
			}
			return a.str("binding"), a.str("session")
		}
		_, left := bind("left")
		kept, keptSession := bind("kept")

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); svc.Run(ctx) }()
		for seq := int64(1); seq <= 4; seq++ {
			time.Sleep(testLease / 2)
			call("POST", "/companion/heartbeat", p.cred(), `{"seq":`+itoa(seq)+`,"bindings":[{"binding":"`+kept+`","generation":2}]}`)
		}
		synctest.Wait()
		if _, err := mgr.Session(left); err == nil {
			t.Error("the expired binding's session outlived its lease and a sweep")
		}
		if v, err := mgr.Session(keptSession); err != nil || !v.Live {
			t.Errorf("the heartbeated binding's session: %+v %v", v, err)
		}
		cancel()
		<-done
	})
}
