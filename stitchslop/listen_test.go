package stitchslop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// syncBuffer is a bytes.Buffer safe to write and read from two goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Issue 28 item 5: listen prints only what is worth waking an agent for:
// an utterance, connected/disconnected once each way (a bridge replaced
// mid-way is a disconnect and a connect, and the listener goes on),
// voice-on/voice-off as they change, and unavailable, after which it ends.
// Polls that heard nothing, and errors, print nothing.
func TestVoiceListenerEvents(t *testing.T) {
	noBridge := errors.New("no bridge")
	script := []struct {
		env string
		err error
	}{
		{err: noBridge},
		{env: `{"ok":false,"error":"no_page","message":"no tab"}`},
		{env: `{"ok":true,"voice":"on"}`},
		{env: `{"ok":true,"voice":true}`},
		{env: `{"ok":false,"error":"uncertain","message":"no answer in time"}`},
		{env: `{"ok":true,"voice":"on","heard":"make it red","atMs":1200,"selection":["obj-1"]}`},
		{env: `{"ok":true,"heard":""}`},
		{err: noBridge}, // the bridge is being replaced by a follower
		{err: noBridge},
		{env: `{"ok":true,"voice":false}`},
		{env: `{"ok":true,"voice":"on","heard":"bigger"}`},
		{env: `not json`},
		{env: `{"ok":false,"error":"unknown_command","message":"no such command: voice.listen"}`},
		{env: `{"ok":true,"heard":"never read"}`},
	}
	var polls int
	var pauses []time.Duration
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	l := &voiceListener{
		poll: func(context.Context) ([]byte, error) {
			s := script[polls]
			polls++
			return []byte(s.env), s.err
		},
		emit:  func(ev voiceEvent) error { return enc.Encode(ev) },
		sleep: func(_ context.Context, d time.Duration) bool { pauses = append(pauses, d); return true },
	}
	if err := l.run(t.Context()); !errors.Is(err, errUnavailable) {
		t.Fatalf("run = %v, want errUnavailable", err)
	}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	wantLines := []string{
		`{"type":"connected"}`,
		`{"type":"voice-on"}`,
		`{"type":"heard","heard":"make it red","atMs":1200,"selection":["obj-1"]}`,
		`{"type":"disconnected"}`,
		`{"type":"connected"}`,
		`{"type":"voice-off"}`,
		`{"type":"voice-on"}`,
		`{"type":"heard","heard":"bigger"}`,
		`{"type":"unavailable","message":"no such command: voice.listen"}`,
	}
	if strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
		t.Fatalf("printed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantLines, "\n"))
	}
	if polls != len(script)-1 {
		t.Fatalf("%d polls, want %d (none after unavailable)", polls, len(script)-1)
	}
	// Errors and no tab pause listenRetry; an empty answer listenPause;
	// an utterance none (the next poll at once).
	if pauses[0] != listenRetry || pauses[1] != listenRetry || pauses[2] != listenPause || pauses[5] != 0 {
		t.Fatalf("pauses %v", pauses)
	}
}

// The listener ends when its context does, without printing anything more.
func TestVoiceListenerStops(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var out bytes.Buffer
	l := &voiceListener{
		poll:  func(context.Context) ([]byte, error) { cancel(); return []byte(`{"ok":true,"heard":"late"}`), nil },
		emit:  func(ev voiceEvent) error { out.WriteString(ev.Type); return nil },
		sleep: sleepCtx,
	}
	if err := l.run(ctx); err != nil || out.Len() != 0 {
		t.Fatalf("run = %v, printed %q", err, out.String())
	}
}

// Against a bridge and a scripted tab: `hub stitchslop listen` polls
// voice.listen with the plugin's 25 s, prints the utterance, and a second
// listener for the same tab is told one runs (exit 1, nothing on stdout).
func TestShellListen(t *testing.T) {
	b := startBridge(t, nil)
	p, _ := b.attach(map[string]any{"token": testToken})
	polled := make(chan map[string]any, 1)
	var n atomic.Int32
	p.serve(func(cmd string, args map[string]any) map[string]any {
		if cmd != "voice.listen" {
			return map[string]any{"ok": false, "error": "unknown_command"}
		}
		if n.Add(1) == 1 {
			polled <- args
			return map[string]any{"ok": true, "voice": "on", "heard": "add a border", "atMs": 5}
		}
		time.Sleep(20 * time.Millisecond)
		return map[string]any{"ok": true, "voice": "on"}
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	lines := &syncBuffer{}
	done := make(chan error, 1)
	sc := &shellClient{ConfigDir: b.configDir(), Stdout: lines, Stderr: &bytes.Buffer{}}
	go func() { done <- sc.listen(ctx) }()
	if args := <-polled; args["timeoutMs"] != float64(25000) {
		t.Fatalf("voice.listen args %v", args)
	}
	adaptertest.WaitFor(t, "the utterance", func() bool { return strings.Contains(lines.String(), `"heard":"add a border"`) })
	var stdout, stderr bytes.Buffer
	second := &shellClient{ConfigDir: b.configDir(), Stdout: &stdout, Stderr: &stderr}
	if err := second.listen(t.Context()); exitCode(err) != 1 || !strings.Contains(err.Error(), "a listener already runs") || stdout.Len() != 0 {
		t.Fatalf("second listener: %v, stdout %q", err, stdout.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("listen = %v", err)
	}
	if got := lines.String(); !strings.HasPrefix(got, `{"type":"connected"}`+"\n"+`{"type":"voice-on"}`+"\n") || strings.Count(got, "\n") != 3 {
		t.Fatalf("printed %q", got)
	}
}
