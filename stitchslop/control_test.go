package stitchslop

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

// §4.1 the session file.

func TestSessionFileWrittenFreshAndRemoved(t *testing.T) {
	b := startBridge(t, nil)
	path := sessionPath(b.configDir(), b.Port())
	if m := adaptertest.FileMode(t, path); m != 0o600 {
		t.Fatalf("session file mode %o, want 600", m)
	}
	s, err := readSession(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Port != b.Port() || s.PID != os.Getpid() || s.Protocol != 1 || s.Origin != testOrigin || s.StartedAt.IsZero() {
		t.Fatalf("session file %+v", s)
	}
	if len(s.Key) < 43 || s.Key != b.S.Key() {
		t.Fatalf("key %q is not 32 random bytes base64url or not the live key", s.Key)
	}
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("session file left after exit: %v", err)
	}
}

func TestSessionKeyMintedPerStart(t *testing.T) {
	keys := map[string]bool{}
	for range 2 {
		b := startBridge(t, nil)
		keys[b.S.Key()] = true
		b.Stop()
	}
	if len(keys) != 2 {
		t.Fatal("the key was reused across starts")
	}
}

func TestSessionFileOfAnotherPidKept(t *testing.T) {
	b := startBridge(t, nil)
	path := sessionPath(b.configDir(), b.Port())
	other := sessionFile{Port: b.Port(), Key: "k", Origin: testOrigin, PID: os.Getpid() + 1, Protocol: 1}
	if err := writeSession(b.configDir(), other); err != nil {
		t.Fatal(err)
	}
	b.Stop()
	if s, err := readSession(path); err != nil || s.PID != other.PID {
		t.Fatalf("another bridge's session file was removed or changed: %+v %v", s, err)
	}
}

// §4.2/§4.3 endpoints and the two checks.

func TestControlPlaneChecks(t *testing.T) {
	b := startBridge(t, nil)
	key := b.S.Key()
	cases := []struct {
		name   string
		method string
		path   string
		header http.Header
		host   string
		want   int
	}{
		{"good key", "GET", "/status", http.Header{KeyHeader: {key}}, "", 200},
		{"missing key", "GET", "/status", nil, "", 401},
		{"wrong key", "GET", "/status", http.Header{KeyHeader: {"nope"}}, "", 401},
		{"longer wrong key", "GET", "/tools", http.Header{KeyHeader: {key + "x"}}, "", 401},
		{"origin before key (good key)", "GET", "/status", http.Header{KeyHeader: {key}, "Origin": {testOrigin}}, "", 403},
		{"origin before key (no key)", "POST", "/call", http.Header{"Origin": {"null"}}, "", 403},
		{"foreign host", "GET", "/status", http.Header{KeyHeader: {key}}, "evil.example", 403},
		{"unknown route", "GET", "/nope", http.Header{KeyHeader: {key}}, "", 426},
		{"wrong method", "GET", "/call", http.Header{KeyHeader: {key}}, "", 426},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := b.Do(adaptertest.Request{Method: tc.method, Path: tc.path, Header: tc.header, Host: tc.host})
			if r.Status != tc.want {
				t.Fatalf("%s %s = %d %s, want %d", tc.method, tc.path, r.Status, r.Body, tc.want)
			}
		})
	}
}

func TestControlStatusToolsWaitCall(t *testing.T) {
	b := startBridge(t, nil)
	st := mustJSON(t, b.control("GET", "/status", "").Body)
	for _, k := range []string{"ok", "connected", "port", "origin", "protocol", "pid", "paired", "tools", "message", "attempts", "refusals"} {
		if _, ok := st[k]; !ok {
			t.Errorf("/status lacks %q: %v", k, st)
		}
	}
	if st["connected"] != false || st["port"] != float64(b.Port()) || st["protocol"] != float64(1) || st["paired"] != false {
		t.Fatalf("/status = %v", st)
	}
	if !strings.Contains(st["message"].(string), "never tried") && !strings.Contains(st["message"].(string), "no browser has tried") {
		t.Errorf("message does not say the browser never tried: %v", st["message"])
	}
	tools := mustJSON(t, b.control("GET", "/tools", "").Body)
	if tools["ok"] != false {
		t.Fatalf("/tools without a tab = %v", tools)
	}
	w := mustJSON(t, b.control("POST", "/wait", `{"seconds":0.05}`).Body)
	if w["ok"] != false || w["error"] != "timeout" {
		t.Fatalf("/wait timeout = %v", w)
	}
	c := mustJSON(t, b.control("POST", "/call", `{"command":"scene.describe"}`).Body)
	if c["ok"] != false || c["error"] != "no_page" {
		t.Fatalf("/call without a tab = %v", c)
	}

	// /wait wakes when a tab attaches.
	done := make(chan map[string]any, 1)
	go func() {
		r, _ := adaptertest.Do(b.URL("/wait"), adaptertest.Request{Method: "POST", Body: []byte(`{"seconds":10}`), Header: http.Header{KeyHeader: {b.S.Key()}}})
		var m map[string]any
		json.Unmarshal(r.Body, &m)
		done <- m
	}()
	waitBlockedIn(t, "stitchslop.(*Server).waitAttached") // blocking, not already attached
	p, _ := b.attach(map[string]any{"token": testToken})
	select {
	case m := <-done:
		if m["ok"] != true {
			t.Fatalf("/wait = %v", m)
		}
	case <-time.After(frameWait):
		t.Fatal("/wait did not wake on attach")
	}
	p.send(map[string]any{"tools": []any{map[string]any{"name": "render"}, map[string]any{"name": "bad name"}}})
	adaptertest.WaitFor(t, "one page tool", func() bool { tl, _ := b.S.Tools(); return len(tl) == 1 })
	st = mustJSON(t, b.control("GET", "/status", "").Body)
	if st["connected"] != true || st["paired"] != true || len(st["tools"].([]any)) != 1 || st["tools"].([]any)[0] != "render" {
		t.Fatalf("/status after attach = %v", st)
	}
	if d, _ := st["droppedTools"].([]any); len(d) != 1 {
		t.Fatalf("dropped tools not reported: %v", st)
	}
	tools = mustJSON(t, b.control("GET", "/tools", "").Body)
	if tools["ok"] != true || len(tools["tools"].([]any)) != 1 {
		t.Fatalf("/tools = %v", tools)
	}
	// The envelope comes back verbatim.
	p.serve(func(cmd string, args map[string]any) map[string]any {
		return map[string]any{"ok": true, "say": "hi", "nested": map[string]any{"a": []any{1, 2}}}
	})
	c = mustJSON(t, b.control("POST", "/call", `{"command":"scene.describe","args":{}}`).Body)
	if c["ok"] != true || c["say"] != "hi" || c["nested"] == nil {
		t.Fatalf("/call = %v", c)
	}
}

func TestControlBadBodies(t *testing.T) {
	b := startBridge(t, nil)
	b.attach(map[string]any{"token": testToken})
	cases := []struct{ path, body string }{
		{"/call", `{`},
		{"/call", `{"command":""}`},
		{"/call", `{"command":"x","args":[1]}`},
		{"/call", `{"command":"x","args":"s"}`},
		{"/wait", `[]`},
		{"/pair", `{"token":""}`},
	}
	for _, tc := range cases {
		r := b.control("POST", tc.path, tc.body)
		m := mustJSON(t, r.Body)
		if m["ok"] != false {
			t.Errorf("POST %s %s = %d %s, want ok:false", tc.path, tc.body, r.Status, r.Body)
		}
	}
}

// The refusal log tells "never tried" from "tried and refused" (§5).
func TestRefusalLogDeduplicated(t *testing.T) {
	b := startBridge(t, nil)
	for range 3 {
		c, _ := b.Dial("/", adaptertest.DialOptions{Origin: "https://evil.example"})
		_ = c
	}
	p := b.dialPage(adaptertest.DialOptions{})
	p.send(map[string]any{"token": "tok_wrong"})
	p.next()
	st := b.S.Report()
	if st.Attempts != 4 {
		t.Fatalf("attempts = %d, want 4", st.Attempts)
	}
	byReason := map[string]Refusal{}
	for _, r := range st.Refusals {
		byReason[r.Reason] = r
	}
	if r := byReason[ReasonOrigin]; r.Count != 3 || r.Detail != "https://evil.example" || r.First.IsZero() || r.Last.Before(r.First) {
		t.Fatalf("origin refusals %+v", r)
	}
	if byReason[ReasonUnknownTok].Count != 1 {
		t.Fatalf("refusals %+v", st.Refusals)
	}
	if !strings.Contains(st.Message, "refused") {
		t.Fatalf("message %q does not say the browser was refused", st.Message)
	}
}

// `pair` at run time: a bridge with neither token nor pairing keeps
// listening, says it needs a token, and pairs once armed.
func TestNeedsTokenThenPairAtRunTime(t *testing.T) {
	b := startBridge(t, func(o *Config) { o.Token = "" })
	if note := b.S.Status().Note; !strings.Contains(note, "needs a token") || !strings.Contains(note, "hub stitchslop pair") {
		t.Fatalf("note = %q", note)
	}
	r := mustJSON(t, b.control("POST", "/pair", `{"token":"tok_late"}`).Body)
	if r["ok"] != true {
		t.Fatalf("/pair = %v", r)
	}
	if b.S.Status().Note != "" {
		t.Fatal("note kept after arming a token")
	}
	_, hello := b.attach(map[string]any{"token": "tok_late"})
	if hello["pairingSecret"] == nil {
		t.Fatal("no pairing minted")
	}
	// Re-arming a spent token is refused.
	r = mustJSON(t, b.control("POST", "/pair", `{"token":"tok_late"}`).Body)
	if r["ok"] != false || r["error"] != "spent_token" {
		t.Fatalf("re-arming a spent token = %v", r)
	}
}

// Control-plane requests count as agent activity for the idle rules.
func TestControlPlaneIsAgentActivity(t *testing.T) {
	lc := hub.NewLifecycle(hub.IdleRules{})
	b := startBridge(t, nil, adaptertest.Options{Lifecycle: lc})
	if !lc.Activity("stitchslop").LastAgent.IsZero() {
		t.Fatal("activity before any request")
	}
	b.control("GET", "/status", "")
	if lc.Activity("stitchslop").LastAgent.IsZero() {
		t.Fatal("a control request was not reported as agent activity")
	}
	b.attach(map[string]any{"token": testToken})
	if !lc.Activity("stitchslop").PageEverAttached {
		t.Fatal("page attach not reported")
	}
}

// Bad input on disk.

func TestPairingFileConcurrentBridges(t *testing.T) {
	dir := t.TempDir()
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Separate stores = separate bridges sharing one config dir.
			st := &pairingStore{dir: dir}
			if err := st.Redeem("https://o"+itoa(i%3)+".example", "tok_"+itoa(i), "secret_"+itoa(i)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	pf, err := (&pairingStore{dir: dir}).load()
	if err != nil {
		t.Fatal(err)
	}
	if len(pf.SpentTokens) != n {
		t.Fatalf("%d spent tokens recorded, want %d (a write was lost)", len(pf.SpentTokens), n)
	}
	st := &pairingStore{dir: dir}
	for i := range n {
		if !st.Verify("https://o"+itoa(i%3)+".example", "secret_"+itoa(i)) && i >= n-3*maxSecretsPerOrigin {
			t.Errorf("pairing %d lost", i)
		}
	}
	// The same token redeemed twice: exactly one wins.
	var wins sync.WaitGroup
	ok := make(chan bool, 8)
	for i := range 8 {
		wins.Add(1)
		go func() {
			defer wins.Done()
			ok <- (&pairingStore{dir: dir}).Redeem(testOrigin, "tok_race", "s"+itoa(i)) == nil
		}()
	}
	wins.Wait()
	close(ok)
	count := 0
	for v := range ok {
		if v {
			count++
		}
	}
	if count != 1 {
		t.Fatalf("one token redeemed %d times", count)
	}
}

func TestGarbagePairingFile(t *testing.T) {
	b := startBridge(t, func(o *Config) {})
	path := filepath.Join(b.configDir(), "pairing.json")
	if err := os.WriteFile(path, []byte("\x00garbage{{"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, hello := b.attach(map[string]any{"token": testToken})
	if hello["pairingSecret"] == nil {
		t.Fatal("no pairing with a garbage file present")
	}
	if _, err := (&pairingStore{dir: b.configDir()}).load(); err != nil {
		t.Fatalf("pairing.json still unreadable: %v", err)
	}
	aside, _ := filepath.Glob(path + ".corrupt-*")
	if len(aside) != 1 {
		t.Fatalf("the corrupt file was not kept aside: %v", aside)
	}
}

func TestGarbageSessionFilesIgnored(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "session-1.json"), []byte("garbage"), 0o600)
	os.WriteFile(filepath.Join(dir, "session-2.json"), []byte(`{"port":2}`), 0o600)
	writeSession(dir, sessionFile{Port: 3, Key: "k", PID: 1 << 30})
	scan := scanSessions(dir)
	if len(scan.Live) != 0 || len(scan.Bad) != 2 || len(scan.Stale) != 1 {
		t.Fatalf("scan = %+v", scan)
	}
}

func TestServeReturnsCleanlyOnCancel(t *testing.T) {
	s, _ := New(&Config{Origin: testOrigin, Ports: []int{0}, ConfigDir: t.TempDir()})
	env := testEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	env.Ready = func(...int) { close(ready) }
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, env) }()
	<-ready
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve after cancel = %v, want nil", err)
	}
}

// Two bridges sharing one config dir: both pairings land in pairing.json,
// and each lists the other as a live bridge.
func TestTwoBridgesShareConfigDir(t *testing.T) {
	shared := filepath.Join(t.TempDir(), "shared")
	b1 := startBridge(t, func(o *Config) { o.ConfigDir = shared; o.Token = "tok_one" })
	b2 := startBridge(t, func(o *Config) { o.ConfigDir = shared; o.Token = "tok_two" })
	_, h1 := b1.attach(map[string]any{"token": "tok_one"})
	_, h2 := b2.attach(map[string]any{"token": "tok_two"})
	store := &pairingStore{dir: shared}
	if !store.Verify(testOrigin, h1["pairingSecret"].(string)) || !store.Verify(testOrigin, h2["pairingSecret"].(string)) {
		t.Fatal("a bridge lost the other's pairing")
	}
	if !store.Spent("tok_one") || !store.Spent("tok_two") {
		t.Fatal("a spent token was lost")
	}
	others := b1.S.Report().OtherBridges
	if len(others) != 1 || others[0]["port"] != b2.Port() {
		t.Fatalf("b1 sees other bridges %v, want port %d", others, b2.Port())
	}
	st := b1.S.Status()
	if !st.PageAttached || st.LastActivity.IsZero() || st.Note != "" {
		t.Fatalf("Status() = %+v", st)
	}
}

// Reading pairing.json costs what the file holds, not the 4 MiB cap: a
// page can trigger a read with every handshake (Verify, Spent) and an agent
// with every status, so a cap-sized buffer per read would turn 30-byte
// handshakes into megabytes of garbage each.
func TestPairingReadAllocatesByFileSize(t *testing.T) {
	store := &pairingStore{dir: t.TempDir()}
	if err := store.Redeem(testOrigin, "tok_a", "secret-a"); err != nil {
		t.Fatal(err)
	}
	const reads = 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range reads {
		if !store.Verify(testOrigin, "secret-a") || !store.Spent("tok_a") {
			t.Fatal("pairing lost")
		}
	}
	runtime.ReadMemStats(&after)
	if perRead := (after.TotalAlloc - before.TotalAlloc) / (2 * reads); perRead > 64<<10 {
		t.Fatalf("one read of a %d-byte pairing.json allocates %d bytes", fileSize(t, store.path()), perRead)
	}
	// The cap still holds: a file past it is corrupt, even if valid JSON.
	big := `{"origins":{},"pad":"` + strings.Repeat("x", maxPairingFile) + `"}`
	if err := os.WriteFile(store.path(), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := store.load(); !errors.Is(err, errCorrupt) {
		t.Fatalf("a pairing.json over %d bytes: load = %v, want errCorrupt", maxPairingFile, err)
	}
}

func fileSize(t testing.TB, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// §4.1 "remove it only if its pid is still yours": the port is what makes a
// session file ours, so the file must be gone before the port is released.
// Otherwise a bridge binding the freed port can write its own file between
// our pid check and our remove, and lose it.
func TestSessionFileRemovedBeforePortReleased(t *testing.T) {
	for range 20 {
		s, err := New(&Config{Origin: testOrigin, Ports: []int{0}, ConfigDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		env := testEnv(t)
		ports := make(chan int, 1)
		env.Ready = func(p ...int) { ports <- p[0] }
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Serve(ctx, env) }()
		port := <-ports
		path := sessionPath(s.configDir(), port)
		cancel()
		var ln net.Listener
		deadline := time.Now().Add(frameWait)
		for ln == nil { // the next bridge, binding the port the moment it is free
			ln, _ = net.Listen("tcp4", hub.LoopbackHost+":"+itoa(port))
			if ln == nil && time.Now().After(deadline) {
				t.Fatalf("port %d never came free", port)
			}
		}
		_, statErr := os.Stat(path)
		// It writes its own session file at once, as a real one would.
		next := sessionFile{Port: port, Key: "next", Origin: testOrigin, PID: os.Getpid() + 1, Protocol: 1}
		if err := writeSession(filepath.Dir(path), next); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		ln.Close()
		if !os.IsNotExist(statErr) {
			t.Fatalf("the port was free while our session file still existed (%v)", statErr)
		}
		if got, err := readSession(path); err != nil || got.Key != "next" {
			t.Fatalf("the next bridge's session file was removed: %+v %v", got, err)
		}
	}
}

// §2.4 file modes hold for a config dir that already existed with looser
// ones (made by hand, or by an older bridge): the dir becomes 0700 and an
// existing pairing.json 0600 at start, before any page pairs.
func TestConfigDirModesTightenedAtStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "loose")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	pf := filepath.Join(dir, "pairing.json")
	if err := os.WriteFile(pf, []byte(`{"version":1,"origins":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(pf, 0o644)
	startBridge(t, func(o *Config) { o.ConfigDir = dir })
	if m := adaptertest.FileMode(t, dir); m != 0o700 {
		t.Errorf("config dir mode %o, want 700", m)
	}
	if m := adaptertest.FileMode(t, pf); m != 0o600 {
		t.Errorf("pairing.json mode %o, want 600", m)
	}
}

// Any web page can make the browser dial the bridge in a loop. Every
// attempt is counted, but the log line for a repeated refusal is thinned
// (the first few in full, then a summary a minute) so a hostile tab cannot fill the
// hub's log file; the first of each kind is always logged (§5: a logged
// refusal means the browser tried).
func TestRepeatedRefusalsThinnedInTheLog(t *testing.T) {
	b := startBridge(t, nil)
	const n = 40
	for range n {
		if c, err := b.Dial("/", adaptertest.DialOptions{Origin: "https://evil.example"}); err == nil {
			c.Close()
			t.Fatal("foreign origin upgraded")
		}
	}
	st := b.S.Report()
	if st.Attempts != n || len(st.Refusals) != 1 || st.Refusals[0].Count != n {
		t.Fatalf("attempts %d, refusals %+v; want every one counted", st.Attempts, st.Refusals)
	}
	lines := strings.Count(b.Logs(), "refused page upgrade: origin mismatch")
	if lines == 0 || lines > 7 {
		t.Fatalf("%d log lines for %d identical refusals, want 1..7", lines, n)
	}
}

// The supervisor restarts a crashed adapter by calling Serve again on the
// same Server: the second run must start clean (no page, fresh key, new
// session file) and the page must attach again with its pairing.
func TestServeAgainOnTheSameServer(t *testing.T) {
	s, err := New(&Config{Origin: testOrigin, Ports: []int{0}, ConfigDir: t.TempDir(), Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	var secret string
	keys := map[string]bool{}
	for run := range 2 {
		env := testEnv(t)
		ready := make(chan int, 1)
		env.Ready = func(p ...int) { ready <- p[0] }
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Serve(ctx, env) }()
		port := <-ready
		if s.attached() {
			t.Fatalf("run %d: a page is attached before any dialled", run)
		}
		keys[s.Key()] = true
		if sf, err := readSession(sessionPath(s.configDir(), port)); err != nil || sf.Key != s.Key() {
			t.Fatalf("run %d: session file %+v %v", run, sf, err)
		}
		c, err := adaptertest.Dial("ws://127.0.0.1:"+itoa(port)+"/", adaptertest.DialOptions{Origin: testOrigin})
		if err != nil {
			t.Fatal(err)
		}
		hs := `{"token":"` + testToken + `"}`
		if run > 0 {
			hs = `{"secret":"` + secret + `"}`
		}
		c.SendText(hs)
		m, err := c.Next(frameWait)
		if err != nil || !strings.Contains(m.Text(), `"hello"`) {
			t.Fatalf("run %d: handshake answer %q %v", run, m.Text(), err)
		}
		if run == 0 {
			var hello map[string]any
			json.Unmarshal(m.Data, &hello)
			secret, _ = hello["pairingSecret"].(string)
		}
		adaptertest.WaitFor(t, "the page to attach", s.attached)
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("run %d: Serve = %v", run, err)
		}
		c.Close()
		if s.attached() {
			t.Fatalf("run %d: page still attached after Serve returned", run)
		}
		if st := s.Status(); len(st.Ports) != 0 {
			t.Fatalf("run %d: stopped bridge reports ports %v", run, st.Ports)
		}
	}
	if len(keys) != 2 {
		t.Fatal("the restart reused the control-plane key")
	}
}
