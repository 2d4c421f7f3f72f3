package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lxzan/gws"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/pixelle"
)

const pixelleWebsite = "https://pixelle.example"

// TestPixelleScripts drives the agent command client end to end: a real
// `hub` process talks to an in-process relay whose browser is scripted.
func TestPixelleScripts(t *testing.T) {
	p := scriptParams(filepath.Join("testdata", "pixelle"))
	for name, cmd := range map[string]func(*testscript.TestScript, bool, []string){
		"pixelle-relay":       cmdPixelleRelay,
		"pixelle-code":        cmdPixelleCode,
		"pixelle-browser":     cmdPixelleBrowser,
		"pixelle-check-store": cmdPixelleCheckStore,
		"pixelle-wait-health": cmdPixelleWaitHealth,
	} {
		p.Cmds[name] = cmd
	}
	testscript.Run(t, p)
}

// scriptRelay is one script's relay and scripted browser.
type scriptRelay struct {
	srv     *pixelle.Server
	relay   string
	browser *scriptBrowser
}

var (
	scriptMu     sync.Mutex
	scriptRelays = map[*testscript.TestScript]*scriptRelay{}
)

func relayOf(ts *testscript.TestScript) *scriptRelay {
	scriptMu.Lock()
	defer scriptMu.Unlock()
	r := scriptRelays[ts]
	if r == nil {
		ts.Fatalf("no relay: run pixelle-relay first")
	}
	return r
}

// pixelle-relay [-timeout D]: start a relay on a free port with a scripted
// browser attached; sets RELAY and PIXELLE_RELAY.
func cmdPixelleRelay(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! pixelle-relay")
	}
	srv := pixelle.New(&pixelle.Config{Website: pixelleWebsite})
	if len(args) == 2 && args[0] == "-timeout" {
		d, err := time.ParseDuration(args[1])
		ts.Check(err)
		srv.CommandTimeout = d
	}
	ready := make(chan int, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	env := &adapters.Env{
		Log:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Ready: func(p ...int) { ready <- p[0] },
	}
	go func() { done <- srv.Serve(ctx, env) }()
	var port int
	select {
	case port = <-ready:
	case err := <-done:
		ts.Fatalf("relay: %v", err)
	}
	r := &scriptRelay{srv: srv, relay: fmt.Sprintf("http://127.0.0.1:%d", port)}
	r.browser = startScriptBrowser(ts, r.relay)
	ts.Defer(func() {
		r.browser.close()
		cancel()
		<-done
	})
	scriptMu.Lock()
	scriptRelays[ts] = r
	scriptMu.Unlock()
	ts.Setenv("RELAY", r.relay)
	ts.Setenv("PORT", strconv.Itoa(port))
	ts.Setenv("PIXELLE_RELAY", r.relay)
}

// pixelle-code: the browser asks for a pairing code; sets CODE and
// CODE_LOWER, and writes it with a newline to code.txt (for `stdin`).
func cmdPixelleCode(ts *testscript.TestScript, neg bool, args []string) {
	b := relayOf(ts).browser
	ts.Check(b.send(`{"type":"pair.create"}`))
	m := b.expect(ts, "pair.code")
	var v struct{ Code string }
	ts.Check(json.Unmarshal(m, &v))
	ts.Setenv("CODE", v.Code)
	ts.Setenv("CODE_LOWER", strings.ToLower(v.Code))
	ts.Check(os.WriteFile(ts.MkAbs("code.txt"), []byte(v.Code+"\n"), 0o600))
}

// pixelle-browser close|revoke|last|paired: act as the page or report
// what it saw (last prints the last routed command frame to stdout).
func cmdPixelleBrowser(ts *testscript.TestScript, neg bool, args []string) {
	b := relayOf(ts).browser
	if len(args) != 1 {
		ts.Fatalf("usage: pixelle-browser close|revoke|last|paired")
	}
	switch args[0] {
	case "close":
		b.close()
		// Wait until the relay has seen the browser go.
		deadline := time.Now().Add(5 * time.Second)
		for relayOf(ts).srv.Status().PageAttached {
			if time.Now().After(deadline) {
				ts.Fatalf("relay still sees the browser")
			}
			time.Sleep(5 * time.Millisecond)
		}
	case "revoke":
		ts.Check(b.send(`{"type":"revoke"}`))
		b.expect(ts, "revoked")
	case "paired":
		b.expect(ts, "paired")
	case "last":
		b.mu.Lock()
		last := b.last
		b.mu.Unlock()
		fmt.Fprintf(ts.Stdout(), "%s\n", last)
	default:
		ts.Fatalf("unknown browser action %q", args[0])
	}
}

// pixelle-check-store: the credentials file is 0600 in a 0700 dir under
// the state dir, and the last command printed no credential.
func cmdPixelleCheckStore(ts *testscript.TestScript, neg bool, args []string) {
	path := filepath.Join(ts.Getenv("HOME"), ".local", "state", "hub", "pixelle", "agent.json")
	fi, err := os.Stat(path)
	ts.Check(err)
	di, err := os.Stat(filepath.Dir(path))
	ts.Check(err)
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		ts.Fatalf("credentials file %v in dir %v, want 0600 in 0700", fi.Mode().Perm(), di.Mode().Perm())
	}
	var cr pixelle.Credentials
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(path)), &cr))
	for _, out := range []string{ts.ReadFile("stdout"), ts.ReadFile("stderr")} {
		if strings.Contains(out, cr.Token) || strings.Contains(out, cr.SessionID) {
			ts.Fatalf("a credential was printed")
		}
	}
	if cr.URL != ts.Getenv("RELAY") {
		ts.Fatalf("stored url %q, want %q", cr.URL, ts.Getenv("RELAY"))
	}
}

// pixelle-wait-health URL: wait until a relay answers /health.
func cmdPixelleWaitHealth(ts *testscript.TestScript, neg bool, args []string) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(args[0] + "/health")
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("no relay at %s: %v", args[0], err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// scriptBrowser is the Pixelle page stand-in: it creates a session with
// the website Origin, authenticates as the browser, and answers routed
// commands from fixtures (see testdata/pixelle/README).
type scriptBrowser struct {
	conn *gws.Conn
	msgs chan []byte
	mu   sync.Mutex
	last []byte
	once sync.Once
	done chan struct{}
}

const scriptState = `{"projectId":"example","title":"Example","revision":4,"selection":["brief"],"nodes":[{"id":"brief","kind":"note","title":"Brief"}],"edges":[]}`

func startScriptBrowser(ts *testscript.TestScript, relay string) *scriptBrowser {
	req, _ := http.NewRequest("POST", relay+"/api/sessions", nil)
	req.Header.Set("Origin", pixelleWebsite)
	resp, err := http.DefaultClient.Do(req)
	ts.Check(err)
	defer resp.Body.Close()
	var sess struct{ ID, BrowserToken string }
	ts.Check(json.NewDecoder(resp.Body).Decode(&sess))
	b := &scriptBrowser{msgs: make(chan []byte, 64), done: make(chan struct{})}
	conn, _, err := gws.NewClient(b, &gws.ClientOption{
		Addr:          "ws" + strings.TrimPrefix(relay, "http") + "/relay",
		RequestHeader: http.Header{"Origin": {pixelleWebsite}},
	})
	ts.Check(err)
	b.conn = conn
	go func() { defer close(b.done); conn.ReadLoop() }()
	hello, _ := json.Marshal(map[string]string{"type": "hello", "role": "browser", "sessionId": sess.ID, "token": sess.BrowserToken})
	ts.Check(b.send(string(hello)))
	b.expect(ts, "ready")
	return b
}

func (b *scriptBrowser) send(s string) error { return b.conn.WriteString(s) }

func (b *scriptBrowser) close() {
	b.once.Do(func() {
		b.conn.WriteClose(1000, nil)
		b.conn.NetConn().Close()
		<-b.done
	})
}

// expect waits for a non-command frame of type typ.
func (b *scriptBrowser) expect(ts *testscript.TestScript, typ string) []byte {
	for {
		select {
		case m := <-b.msgs:
			var v struct{ Type string }
			json.Unmarshal(m, &v)
			if v.Type == typ {
				return m
			}
		case <-time.After(5 * time.Second):
			ts.Fatalf("browser: no %s frame", typ)
		}
	}
}

func (b *scriptBrowser) OnOpen(*gws.Conn)             {}
func (b *scriptBrowser) OnClose(*gws.Conn, error)     {}
func (b *scriptBrowser) OnPing(c *gws.Conn, p []byte) { c.WritePong(p) }
func (b *scriptBrowser) OnPong(*gws.Conn, []byte)     {}
func (b *scriptBrowser) OnMessage(c *gws.Conn, m *gws.Message) {
	defer m.Close()
	data := bytes.Clone(m.Bytes())
	var v struct {
		Type    string
		ID      string
		Command struct {
			Method      string
			OperationID string
		}
	}
	json.Unmarshal(data, &v)
	if v.Type != "command" {
		select {
		case b.msgs <- data:
		default:
		}
		return
	}
	b.mu.Lock()
	b.last = data
	b.mu.Unlock()
	var tail string
	switch {
	case v.Command.OperationID == "hang":
		return // never answered: the relay's timeout speaks
	case v.Command.OperationID == "conflict":
		tail = `"error":{"code":"REVISION_CONFLICT","message":"Read state and rebase.","currentRevision":4}`
	case v.Command.Method == "state.read":
		tail = `"result":` + scriptState
	case v.Command.Method == "selection.read":
		tail = `"result":{"revision":4,"nodes":[{"id":"brief","kind":"note","title":"Brief","content":"Make it blue"}],"missing":[]}`
	default:
		tail = `"result":{"revision":5,"affected":["concept"],"operationId":"` + v.Command.OperationID + `"}`
	}
	c.WriteString(fmt.Sprintf(`{"type":"result","id":%q,%s}`, v.ID, tail))
}
