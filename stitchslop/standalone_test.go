package stitchslop

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// standalone runs RunStandalone in-process with pipes for stdio.
type standalone struct {
	t      *testing.T
	port   int
	dir    string
	stdin  *io.PipeWriter
	stdout *adaptertest.SyncBuffer
	stderr *adaptertest.SyncBuffer
	cancel context.CancelFunc
	done   chan error
}

func startStandalone(t *testing.T, mod func(*StandaloneOptions)) *standalone {
	t.Helper()
	dirs := adaptertest.TempDirs(t)
	inR, inW := io.Pipe()
	s := &standalone{t: t, port: freePort(t), dir: filepath.Join(dirs.Home, ".stitchslop"), stdin: inW,
		stdout: &adaptertest.SyncBuffer{}, stderr: &adaptertest.SyncBuffer{}, done: make(chan error, 1)}
	o := StandaloneOptions{Origin: testOrigin, Port: s.port, Token: testToken, Stdin: inR, Stdout: s.stdout, Stderr: s.stderr}
	if mod != nil {
		mod(&o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() { s.done <- RunStandalone(ctx, o) }()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
		}
	})
	return s
}

// ready waits for the session file and returns it.
func (s *standalone) ready() sessionFile {
	s.t.Helper()
	deadline := time.Now().Add(frameWait)
	for time.Now().Before(deadline) {
		if sf, err := readSession(sessionPath(s.dir, s.port)); err == nil {
			return sf
		}
		select {
		case err := <-s.done:
			s.t.Fatalf("bridge exited early: %v\n%s", err, s.stderr)
		default:
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.t.Fatal("bridge never wrote its session file")
	return sessionFile{}
}

func (s *standalone) exited(within time.Duration) (error, bool) {
	select {
	case err := <-s.done:
		s.done <- err
		return err, true
	case <-time.After(within):
		return nil, false
	}
}

func (s *standalone) status(key string) int {
	r, err := adaptertest.Do("http://127.0.0.1:"+itoa(s.port)+"/status", adaptertest.Request{Header: http.Header{KeyHeader: {key}}})
	if err != nil {
		return 0
	}
	return r.Status
}

func TestStandaloneRefusesWithoutCredential(t *testing.T) {
	s := startStandalone(t, func(o *StandaloneOptions) { o.Token = "" })
	err, ok := s.exited(frameWait)
	if !ok || err == nil || !strings.Contains(err.Error(), "neither STITCHSLOP_TOKEN nor a stored pairing") {
		t.Fatalf("exit = %v, %v", err, ok)
	}
}

func TestStandaloneRefusesSpentTokenWithoutPairing(t *testing.T) {
	dirs := adaptertest.TempDirs(t)
	dir := filepath.Join(dirs.Home, ".stitchslop")
	// Spent for a different origin, so this origin has no pairing.
	if err := (&pairingStore{dir: dir}).Redeem("https://other.example", testToken, "s"); err != nil {
		t.Fatal(err)
	}
	err := RunStandalone(t.Context(), StandaloneOptions{Origin: testOrigin, Port: freePort(t), Token: testToken, ConfigDir: dir,
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "already redeemed") {
		t.Fatalf("err = %v", err)
	}
}

func TestStandalonePortBusyFails(t *testing.T) {
	busy := listenOn(t, 0)
	s := startStandalone(t, func(o *StandaloneOptions) { o.Port = busy })
	err, ok := s.exited(frameWait)
	if !ok || err == nil || !strings.Contains(err.Error(), "cannot listen") {
		t.Fatalf("exit = %v, %v", err, ok)
	}
}

// §2.8: stdin closing before initialize is ignored.
func TestStandaloneStdinCloseBeforeInitializeIgnored(t *testing.T) {
	s := startStandalone(t, nil)
	sf := s.ready()
	s.stdin.Close()
	if err, gone := s.exited(300 * time.Millisecond); gone {
		t.Fatalf("exited on stdin close before initialize: %v", err)
	}
	if st := s.status(sf.Key); st != 200 {
		t.Fatalf("control plane after stdin close = %d", st)
	}
	s.cancel()
	if err, ok := s.exited(frameWait); !ok || err != nil {
		t.Fatalf("exit after cancel = %v %v", err, ok)
	}
	if _, err := os.Stat(sessionPath(s.dir, s.port)); !os.IsNotExist(err) {
		t.Fatal("session file left behind")
	}
}

// §2.8: stdin closing after initialize ends the bridge with exit 0.
func TestStandaloneStdinCloseAfterInitializeExits(t *testing.T) {
	s := startStandalone(t, nil)
	s.ready()
	io.WriteString(s.stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`+"\n")
	adaptertest.WaitFor(t, "the initialize answer", func() bool { return strings.Contains(s.stdout.String(), `"id":1`) })
	s.stdin.Close()
	err, ok := s.exited(frameWait)
	if !ok || err != nil {
		t.Fatalf("exit = %v %v", err, ok)
	}
	// No page ever paired, so the last words must not promise a kept
	// pairing (the tests with a paired page check that they do).
	if e := s.stderr.String(); !strings.Contains(e, "closed stdin") || !strings.Contains(e, "no page has paired with it, so starting again needs a token") {
		t.Fatalf("stderr does not say why and whether a pairing is kept:\n%s", e)
	}
}

// A signal after initialize is a stop on request: stderr must not blame
// the client for closing stdin (it did not).
func TestStandaloneSignalAfterInitializeSaysSo(t *testing.T) {
	s := startStandalone(t, nil)
	s.ready()
	io.WriteString(s.stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`+"\n")
	adaptertest.WaitFor(t, "the initialize answer", func() bool { return strings.Contains(s.stdout.String(), `"id":1`) })
	s.cancel()
	if err, ok := s.exited(frameWait); !ok || err != nil {
		t.Fatalf("exit = %v %v", err, ok)
	}
	if e := s.stderr.String(); strings.Contains(e, "closed stdin") || !strings.Contains(e, "exiting on request") {
		t.Fatalf("stderr gives the wrong reason:\n%s", e)
	}
}

// §2.7: no page within the window → exit 0; an MCP initialize cancels it.
func TestStandaloneNoPageIdleExit(t *testing.T) {
	s := startStandalone(t, func(o *StandaloneOptions) { o.NoPageWithin = 150 * time.Millisecond })
	s.ready()
	err, ok := s.exited(frameWait)
	if !ok || err != nil {
		t.Fatalf("exit = %v %v", err, ok)
	}
	if e := s.stderr.String(); !strings.Contains(e, "no page attached") || !strings.Contains(e, "starting again needs a token") {
		t.Fatalf("stderr:\n%s", e)
	}
}

func TestStandaloneInitializeCancelsIdleExit(t *testing.T) {
	s := startStandalone(t, func(o *StandaloneOptions) {
		o.NoPageWithin = 150 * time.Millisecond
		o.AgentIdle = 150 * time.Millisecond
	})
	s.ready()
	io.WriteString(s.stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`+"\n")
	if err, gone := s.exited(500 * time.Millisecond); gone {
		t.Fatalf("idle exit despite an MCP owner: %v\n%s", err, s.stderr)
	}
}

// §2.8 standalone: no agent activity → exit, even with a page attached.
func TestStandaloneAgentIdleWithPageAttached(t *testing.T) {
	const idle = 1500 * time.Millisecond
	s := startStandalone(t, func(o *StandaloneOptions) { o.AgentIdle = idle })
	started := time.Now()
	sf := s.ready()
	c, err := adaptertest.Dial("ws://127.0.0.1:"+itoa(s.port)+"/", adaptertest.DialOptions{Origin: testOrigin})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SendText(`{"token":"` + testToken + `"}`)
	if m, err := c.Next(frameWait); err != nil || !strings.Contains(m.Text(), "hello") {
		t.Fatalf("handshake: %v %s", err, m.Text())
	}
	// Agent activity postpones the exit: control requests keep it alive
	// well past one idle period from the start...
	var last time.Time
	for time.Since(started) < 2*idle {
		time.Sleep(150 * time.Millisecond)
		last = time.Now() // the bridge records the request after this
		if st := s.status(sf.Key); st != 200 {
			t.Fatalf("status after %s of regular agent activity = %d", time.Since(started), st)
		}
	}
	// ...and once they stop, the bridge exits, not before an idle period
	// has passed since the last one.
	err, ok := s.exited(frameWait)
	if !ok || err != nil {
		t.Fatalf("exit = %v %v", err, ok)
	}
	if quiet := time.Since(last); quiet < idle {
		t.Fatalf("exited %s after the last agent activity, want at least %s", quiet, idle)
	}
	if e := s.stderr.String(); !strings.Contains(e, "no agent activity") || !strings.Contains(e, "pairing is kept") {
		t.Fatalf("stderr:\n%s", e)
	}
}

// Garbage in pairing.json is a clear error at start, not a bare "no
// pairing": the user did pair, and the message must point at the file.
func TestStandaloneCorruptPairingFileSaysSo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cfg")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pairing.json"), []byte("{\x00garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := RunStandalone(t.Context(), StandaloneOptions{Origin: testOrigin, Port: freePort(t), ConfigDir: dir,
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "pairing.json") || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("err = %v, want it to name the corrupt pairing.json", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "pairing.json")); string(b) != "{\x00garbage" {
		t.Fatal("refusing to start changed pairing.json")
	}
}

// §1 refuses only when there is neither a token nor a stored pairing: a
// valid pairing.json left at 0644 (and its dir at 0755) is made private
// and used, as Serve does, not refused for its mode.
func TestStandaloneUsesALoosePairingFile(t *testing.T) {
	dirs := adaptertest.TempDirs(t)
	dir := filepath.Join(dirs.Home, ".stitchslop")
	if err := (&pairingStore{dir: dir}).Redeem(testOrigin, testToken, "secret"); err != nil {
		t.Fatal(err)
	}
	pf := filepath.Join(dir, "pairing.json")
	os.Chmod(pf, 0o644)
	os.Chmod(dir, 0o755)
	s := startStandalone(t, func(o *StandaloneOptions) { o.Token = ""; o.ConfigDir = dir })
	s.dir = dir
	s.ready()
	if m := adaptertest.FileMode(t, pf); m != 0o600 {
		t.Errorf("pairing.json mode %o, want 600", m)
	}
	if m := adaptertest.FileMode(t, dir); m != 0o700 {
		t.Errorf("config dir mode %o, want 700", m)
	}
}

// A pairing.json refused as unsafe (here a symbolic link) is not moved
// aside by the next pairing, as a corrupt one is: the refusal must not
// promise that, but say pairing stays impossible until it is removed.
func TestStandaloneUnsafePairingFileSaysWhatHappens(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cfg")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "real.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.json", filepath.Join(dir, "pairing.json")); err != nil {
		t.Fatal(err)
	}
	err := RunStandalone(t.Context(), StandaloneOptions{Origin: testOrigin, Port: freePort(t), ConfigDir: dir,
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("err = %v, want it to name the link", err)
	}
	if strings.Contains(err.Error(), "moved aside") || !strings.Contains(err.Error(), "until it is removed") {
		t.Fatalf("err = %v, want it to say no pairing is stored until the file is removed", err)
	}
	if err := (&pairingStore{dir: dir}).Redeem(testOrigin, testToken, "secret"); err == nil {
		t.Fatal("a pairing was stored through the link")
	}
}
