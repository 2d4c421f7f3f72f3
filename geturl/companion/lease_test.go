package companion

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Each bind makes a new session on the chosen project with that
// project's flags; binding the same conversation again is a reconnect
// that ends the old session at once; a device binds at most MaxBindings
// conversations.
func TestBind(t *testing.T) {
	h := newHarness(t)
	p := h.paired("laptop")

	ro := h.mustBind(p, "ro", "https://chat.example/c/1")
	rw := h.mustBind(p, "rw", "https://chat.example/c/2")
	if ro.session == rw.session || ro.binding == rw.binding || rw.generation <= ro.generation {
		t.Fatalf("binds share state: %+v %+v", ro, rw)
	}
	for _, c := range []struct {
		b               bound
		write, terminal bool
	}{{ro, false, false}, {rw, true, true}} {
		v, err := h.mgr.Session(c.b.session)
		if err != nil || !v.Live || v.Write != c.write || v.Terminal != c.terminal || !strings.HasPrefix(v.Label, "companion: laptop") {
			t.Errorf("session %s: %+v %v", c.b.session, v, err)
		}
		if c.b.prompt != "PROMPT http://127.0.0.1/v0/init/"+v.InitToken {
			t.Errorf("prompt %q is not the session's Init prompt", c.b.prompt)
		}
	}

	// Reconnect: the old session ends before the new one answers.
	oldRead, oldInit := h.readToken(ro.session), initToken(ro.prompt)
	again := h.mustBind(p, "ro", "https://chat.example/c/1")
	if again.session == ro.session || again.binding == ro.binding {
		t.Fatalf("reconnect reused %+v", again)
	}
	if _, err := h.mgr.Session(ro.session); err == nil {
		t.Error("the reconnected binding's session still exists")
	}
	wantS, wantB := h.unknownAnswer(false)
	if s, b := h.dataGet("/v0/" + oldRead + "/r?path=a.txt"); s != wantS || b != wantB {
		t.Errorf("the old read base after reconnect: %d %s", s, b)
	}
	wantS, wantB = h.unknownAnswer(true)
	if s, b := h.dataGet("/v0/init/" + oldInit); s != wantS || b != wantB {
		t.Errorf("the old Init after reconnect: %d %s", s, b)
	}
	if s, _ := h.dataGet("/v0/init/" + initToken(again.prompt)); s != 200 {
		t.Errorf("the new Init: %d", s)
	}
	if st := states(h.heartbeat(p, 1, ro, again)); st[ro.binding] != "ended" || st[again.binding] != "live" {
		t.Errorf("heartbeat after reconnect: %v", st)
	}

	// Refusals.
	for _, c := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"unknown project", `{"project":"nope","conversation":"https://chat.example/c/9"}`, 404, "project_not_found"},
		{"bad project name", `{"project":"../x","conversation":"https://chat.example/c/9"}`, 404, "project_not_found"},
		{"query", `{"project":"ro","conversation":"https://chat.example/c/9?token=x"}`, 400, "bad_request"},
		{"fragment", `{"project":"ro","conversation":"https://chat.example/c/9#x"}`, 400, "bad_request"},
		{"credentials", `{"project":"ro","conversation":"https://u:p@chat.example/c/9"}`, 400, "bad_request"},
		{"not http", `{"project":"ro","conversation":"file:///etc/passwd"}`, 400, "bad_request"},
		{"too long", `{"project":"ro","conversation":"https://chat.example/` + strings.Repeat("a", 512) + `"}`, 400, "bad_request"},
		{"unknown field", `{"project":"ro","conversation":"https://chat.example/c/9","write":true}`, 400, "bad_request"},
	} {
		if a := h.do("POST", "/companion/bind", p.cred(), c.body); a.status != c.status || a.str("error") != c.code {
			t.Errorf("%s: %d %s", c.name, a.status, a.raw)
		}
	}

	// The per-device cap.
	q := h.paired("desktop")
	for i := range MaxBindings {
		h.mustBind(q, "ro", "https://chat.example/q/"+itoa(int64(i)))
		if i == MaxBindings-3 {
			break // the global cap of enabled sessions is 16: keep room for p's two
		}
	}
	for _, b := range h.svc.Overview().Devices {
		if b.ID == p.device {
			if len(b.Bindings) != 2 {
				t.Fatalf("p has %d bindings", len(b.Bindings))
			}
		}
	}
	if err := h.svc.Revoke(q.device); err != nil {
		t.Fatal(err)
	}
	for i := 2; i < MaxBindings; i++ {
		h.mustBind(p, "ro", "https://chat.example/c/x"+itoa(int64(i)))
	}
	if _, a := h.bind(p, "ro", "https://chat.example/c/over"); a.status != http.StatusTooManyRequests || a.str("error") != "too_many_bindings" {
		t.Fatalf("over the cap: %d %s", a.status, a.raw)
	}
	// A reconnect at the cap is no new binding.
	h.mustBind(p, "ro", "https://chat.example/c/1")
}

// The lease: a companion capability works at the data plane while its
// lease lives and fails after, exactly as an ended session's does; a
// heartbeat extends it, a late one cannot revive it, a replayed one is
// refused and extends nothing; disconnect, revoke, rotation, session stop
// and project changes end it at once; manual sessions never notice.
func TestLease(t *testing.T) {
	type step func(h *harness, p pairing, b bound)
	cases := []struct {
		name string
		// end ends the binding's authority (nil: the lease runs out).
		end step
		// heartbeatLive: whether a heartbeat right after end says live.
		heartbeatLive bool
	}{
		{"expiry", func(h *harness, p pairing, b bound) { h.clock.Advance(testLease) }, false},
		{"expiry after a heartbeat", func(h *harness, p pairing, b bound) {
			h.clock.Advance(testLease - time.Second)
			if st := states(h.heartbeat(p, 1, b)); st[b.binding] != "live" {
				t.Fatalf("heartbeat within the lease: %v", st)
			}
			h.clock.Advance(testLease - time.Second)
			if s, _ := h.dataGet("/v0/" + h.readToken(b.session) + "/r?path=a.txt"); s != 200 {
				t.Fatalf("read within the extended lease: %d", s)
			}
			h.clock.Advance(time.Second)
		}, false},
		{"disconnect", func(h *harness, p pairing, b bound) {
			if a := h.do("POST", "/companion/disconnect", p.cred(), `{"binding":"`+b.binding+`"}`); a.status != 200 || a.str("state") != "ended" {
				t.Fatalf("disconnect: %d %s", a.status, a.raw)
			}
		}, false},
		{"revoke", func(h *harness, p pairing, b bound) { h.svc.Revoke(p.device) }, false},
		{"rotation", func(h *harness, p pairing, b bound) { h.mgr.Rotate(b.session) }, false},
		{"session stop", func(h *harness, p pairing, b bound) { h.mgr.Stop(b.session) }, false},
		{"session stop and start", func(h *harness, p pairing, b bound) { h.mgr.Stop(b.session); h.mgr.Start(b.session) }, false},
		{"project set", func(h *harness, p pairing, b bound) {
			w := true
			if _, err := h.mgr.SetProject("rw", sessionChange(&w)); err != nil {
				t.Fatal(err)
			}
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			p := h.paired("laptop")
			manual, err := h.mgr.NewSession("rw", "by hand")
			if err != nil {
				t.Fatal(err)
			}
			b := h.mustBind(p, "rw", "https://chat.example/c/1")
			read, init := h.readToken(b.session), initToken(b.prompt)
			g, _ := h.mgr.Live(b.session)
			mut := g.Token(3)
			if s, body := h.dataGet("/v0/" + read + "/r?path=a.txt"); s != 200 || !strings.Contains(body, "hello") {
				t.Fatalf("read while live: %d %s", s, body)
			}
			if s, _ := h.dataGet("/v0/init/" + init); s != 200 {
				t.Fatalf("Init while live: %d", s)
			}

			c.end(h, p, b)

			wantS, wantB := h.unknownAnswer(false)
			for name, target := range map[string]string{"read": "/v0/" + read + "/r?path=a.txt", "mutation": "/v0/" + mut + "/r?path=a.txt"} {
				if s, body := h.dataGet(target); s != wantS || body != wantB {
					t.Errorf("%s after the end: %d %s; want what an unknown token gets", name, s, body)
				}
			}
			wantS, wantB = h.unknownAnswer(true)
			if s, body := h.dataGet("/v0/init/" + init); s != wantS || body != wantB {
				t.Errorf("Init after the end: %d %s", s, body)
			}
			// Whatever the manager holds for the session now (a new
			// generation after rotation), none of it answers.
			if tok := h.readToken(b.session); tok != "" {
				if s, _ := h.dataGet("/v0/" + tok + "/r?path=a.txt"); s == 200 {
					t.Error("the session's new generation answers without a binding")
				}
			}
			if c.name != "revoke" {
				if st := states(h.heartbeat(p, 100, b)); st[b.binding] != "ended" {
					t.Errorf("a heartbeat after the end: %v", st)
				}
				h.svc.Sweep()
				if s, _ := h.dataGet("/v0/" + read + "/r?path=a.txt"); s == 200 {
					t.Error("the heartbeat brought it back")
				}
			}
			h.svc.Sweep()
			if _, err := h.mgr.Session(b.session); err == nil {
				t.Error("the ended binding's session still exists after a sweep")
			}
			if ov := h.svc.Overview(); len(ov.Devices) > 0 && len(ov.Devices[0].Bindings) != 0 {
				t.Errorf("the ended binding is listed live: %+v", ov.Devices[0].Bindings)
			}

			// The manual session never had a lease.
			h.clock.Advance(time.Hour)
			h.svc.Sweep()
			if s, _ := h.dataGet("/v0/" + h.readToken(manual.ID) + "/r?path=a.txt"); s != 200 {
				t.Errorf("the manual session after all that: %d", s)
			}
		})
	}
}

// A heartbeat whose seq is not greater than the last accepted one is
// refused and extends nothing.
func TestStaleHeartbeat(t *testing.T) {
	h := newHarness(t)
	p := h.paired("laptop")
	b := h.mustBind(p, "ro", "https://chat.example/c/1")
	read := h.readToken(b.session)
	h.clock.Advance(time.Second)
	if a := h.heartbeat(p, 5, b); a.status != 200 || states(a)[b.binding] != "live" || a.body["lease_ms"] != float64(15000) {
		t.Fatalf("heartbeat: %d %s", a.status, a.raw)
	}
	// Lease now ends at 1s+15s. Replays near the end must not move it.
	h.clock.Advance(testLease - time.Second)
	for _, seq := range []int64{5, 4, 1} {
		if a := h.heartbeat(p, seq, b); a.status != http.StatusConflict || a.str("error") != "stale_heartbeat" {
			t.Fatalf("seq %d replayed: %d %s", seq, a.status, a.raw)
		}
	}
	for _, body := range []string{`{"seq":0,"bindings":[]}`, `{"seq":-1,"bindings":[]}`, `{"seq":1.5,"bindings":[]}`} {
		if a := h.do("POST", "/companion/heartbeat", p.cred(), body); a.status != http.StatusBadRequest {
			t.Errorf("%s: %d", body, a.status)
		}
	}
	h.clock.Advance(time.Second)
	if s, _ := h.dataGet("/v0/" + read + "/r?path=a.txt"); s == 200 {
		t.Fatal("a replayed heartbeat extended the lease")
	}
	if st := states(h.heartbeat(p, 6, b)); st[b.binding] != "ended" {
		t.Fatalf("the next fresh heartbeat revived it: %v", st)
	}
	// Another device's binding is not ours to keep alive.
	q := h.paired("desktop")
	c := h.mustBind(q, "ro", "https://chat.example/c/2")
	if st := states(h.heartbeat(p, 7, c)); st[c.binding] != "ended" {
		t.Fatalf("a device kept another's binding: %v", st)
	}
	if st := states(h.heartbeat(q, 1, bound{binding: c.binding, generation: c.generation + 1})); st[c.binding] != "ended" {
		t.Fatalf("a wrong generation: %v", st)
	}
}

// A new run ends the bindings of the last (no lease survives it), deletes
// their sessions and keeps them as history; devices stay paired.
func TestRestartEndsBindings(t *testing.T) {
	h := newHarness(t)
	p := h.paired("laptop")
	b := h.mustBind(p, "ro", "https://chat.example/c/1")
	h.svc = h.open()
	if _, err := h.mgr.Session(b.session); err == nil {
		t.Fatal("the last run's companion session survived the restart")
	}
	if g := h.readToken(b.session); g != "" {
		t.Fatal("still live")
	}
	raw, _ := os.ReadFile(h.path())
	if !strings.Contains(string(raw), b.binding) || !strings.Contains(string(raw), `"ended"`) {
		t.Fatalf("the binding is not kept as ended history:\n%s", raw)
	}
	if a := h.do("GET", "/companion/projects", p.cred(), ""); a.status != 200 {
		t.Fatalf("the device is not paired after a restart: %d", a.status)
	}
	if st := states(h.heartbeat(p, 1, b)); st[b.binding] != "ended" {
		t.Fatalf("heartbeat after restart: %v", st)
	}
}

// Data-plane reads run while binds, heartbeats, reconnects and
// disconnects change the leases (for the race detector); a read never
// succeeds on a binding after its disconnect answered.
func TestLeaseConcurrency(t *testing.T) {
	h := newHarness(t)
	p := h.paired("laptop")
	manual, _ := h.mgr.NewSession("ro", "by hand")
	manualRead := h.readToken(manual.ID)
	done := make(chan struct{})
	errs := make(chan string, 100)
	go func() {
		defer close(done)
		for i := range 40 {
			if s, _ := h.dataGet("/v0/" + manualRead + "/r?path=a.txt"); s != 200 {
				errs <- "the manual session failed a read: " + itoa(int64(s))
			}
			_ = i
		}
	}()
	seq := int64(0)
	for i := range 10 {
		b := h.mustBind(p, "ro", "https://chat.example/c/"+itoa(int64(i%3)))
		read := h.readToken(b.session)
		seq++
		h.heartbeat(p, seq, b)
		if s, _ := h.dataGet("/v0/" + read + "/r?path=a.txt"); s != 200 {
			t.Errorf("bind %d: read %d", i, s)
		}
		h.do("POST", "/companion/disconnect", p.cred(), `{"binding":"`+b.binding+`"}`)
		if s, _ := h.dataGet("/v0/" + read + "/r?path=a.txt"); s == 200 {
			t.Errorf("bind %d: read after disconnect", i)
		}
	}
	<-done
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// A device that sends its body slowly holds only its own request: another
// device's heartbeat is answered meanwhile (the body is read before the
// service's lock is taken).
func TestSlowBodyHoldsNoLock(t *testing.T) {
	h := newHarness(t)
	slow, fast := h.paired("slow"), h.paired("fast")
	srv := httptest.NewServer(h.svc.Handler())
	defer srv.Close()
	send := func(ctx context.Context, path, cred string, body io.Reader) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+path, body)
		req.Host = "127.0.0.1:47433"
		req.Header.Set("Origin", testOrigin)
		req.Header.Set("Authorization", "Bearer "+cred)
		return srv.Client().Do(req)
	}
	pr, pw := io.Pipe()
	defer pw.Close() // before srv.Close, which waits for the slow request
	slowDone := make(chan struct{})
	go func() {
		defer close(slowDone)
		if resp, err := send(context.Background(), "/companion/bind", slow.cred(), pr); err == nil {
			resp.Body.Close()
		}
	}()
	pw.Write([]byte(`{"project":"ro",`)) // the handler is now reading the rest
	// Deadlock detection only: the answer needs no waiting at all.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := send(ctx, "/companion/heartbeat", fast.cred(), strings.NewReader(`{"seq":1,"bindings":[]}`))
	if err != nil {
		t.Fatalf("another device's heartbeat while a body trickles in: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("heartbeat: %d", resp.StatusCode)
	}
	pw.Write([]byte(`"conversation":"https://chat.example/c/1"}`))
	pw.Close()
	<-slowDone
}

// A bind companion.json cannot record is refused and its session ended:
// an unrecorded binding would outlive a restart as a session without a
// lease.
func TestBindUnrecordedIsRefused(t *testing.T) {
	h := newHarness(t)
	p := h.paired("laptop")
	// Make the file unwritable even for root: its name is now a directory.
	os.Rename(h.path(), h.path()+".away")
	os.MkdirAll(filepath.Join(h.path(), "x"), 0o700)
	before := len(h.mgr.List())
	if _, a := h.bind(p, "ro", "https://chat.example/c/1"); a.status != http.StatusInternalServerError {
		t.Fatalf("bind without a writable companion.json: %d %s", a.status, a.raw)
	}
	if n := len(h.mgr.List()); n != before {
		t.Fatalf("%d sessions after a refused bind, want %d", n, before)
	}
	if ov := h.svc.Overview(); len(ov.Devices[0].Bindings) != 0 {
		t.Fatalf("a refused bind is listed: %+v", ov.Devices[0].Bindings)
	}
}
