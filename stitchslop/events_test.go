package stitchslop

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// eventStream reads GET /events as a face would.
type eventStream struct {
	t    *testing.T
	evs  chan ToolsEvent
	resp *http.Response
}

func openEvents(t *testing.T, b *bridge, header http.Header) (*eventStream, int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", b.URL("/events?face=test"), nil)
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, resp.StatusCode
	}
	s := &eventStream{t: t, evs: make(chan ToolsEvent, 64), resp: resp}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(s.evs)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var ev ToolsEvent
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Errorf("event line %q: %v", sc.Bytes(), err)
				continue
			}
			s.evs <- ev
		}
	}()
	t.Cleanup(func() { cancel(); resp.Body.Close(); <-done })
	return s, resp.StatusCode
}

// until reads events until one satisfies ok.
func (s *eventStream) until(what string, ok func(ToolsEvent) bool) ToolsEvent {
	s.t.Helper()
	timeout := time.After(frameWait)
	for {
		select {
		case ev, open := <-s.evs:
			if !open {
				s.t.Fatalf("the event stream ended before %s", what)
			}
			if ok(ev) {
				return ev
			}
		case <-timeout:
			s.t.Fatalf("no event: %s", what)
		}
	}
}

func (s *eventStream) ended() {
	s.t.Helper()
	timeout := time.After(frameWait)
	for {
		select {
		case _, open := <-s.evs:
			if !open {
				return
			}
		case <-timeout:
			s.t.Fatal("the event stream did not end")
		}
	}
}

// GET /events is keyed like every control route and refuses pages first.
func TestEventsRefusals(t *testing.T) {
	b := startBridge(t, nil)
	cases := []struct {
		name   string
		header http.Header
		status int
	}{
		{"no key", http.Header{}, http.StatusUnauthorized},
		{"wrong key", http.Header{KeyHeader: {"nope"}}, http.StatusUnauthorized},
		{"a page, even with the key", http.Header{KeyHeader: {b.S.Key()}, "Origin": {testOrigin}}, http.StatusForbidden},
		{"the key", http.Header{KeyHeader: {b.S.Key()}}, http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, status := openEvents(t, b, tc.header); status != tc.status {
				t.Fatalf("status %d, want %d", status, tc.status)
			}
		})
	}
}

// The stream starts with the current state and follows every attach, tool
// revision and detach; an attached face counts as an agent in status and
// holds the idle rules off; the stream ends when the bridge stops.
func TestEventsFollowThePage(t *testing.T) {
	b := startBridge(t, nil)
	if got := b.S.Status().AgentSessions; got != 0 {
		t.Fatalf("agents before any face = %d", got)
	}
	s, _ := openEvents(t, b, http.Header{KeyHeader: {b.S.Key()}})
	first := s.until("the current state", func(ToolsEvent) bool { return true })
	if first.Connected || len(first.Tools) != 0 || first.Port != b.Port() {
		t.Fatalf("first event %+v", first)
	}
	adaptertest.WaitFor(t, "the face to count as an agent", func() bool { return b.S.Status().AgentSessions == 1 })

	p, _ := b.attach(map[string]any{"token": testToken})
	s.until("the attach", func(ev ToolsEvent) bool { return ev.Connected })
	steps := []struct {
		name  string
		tools string
		want  []string
	}{
		{"a list", `[{"name":"scene.describe"},{"name":"render"}]`, []string{"scene.describe", "render"}},
		{"a revision", `[{"name":"render"}]`, []string{"render"}},
		{"a shadowing tool is dropped", `[{"name":"wait_for_connection"},{"name":"render"}]`, []string{"render"}},
	}
	last := first.Rev
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			p.SendText(`{"tools":` + st.tools + `}`)
			ev := s.until(st.name, func(ev ToolsEvent) bool { return ev.Rev > last && len(ev.Tools) == len(st.want) })
			last = ev.Rev
			for i, want := range st.want {
				if ev.Tools[i].Name != want || !ev.Connected {
					t.Fatalf("event %+v, want %v", ev, st.want)
				}
			}
		})
	}
	p.Close()
	s.until("the detach", func(ev ToolsEvent) bool { return !ev.Connected && len(ev.Tools) == 0 })

	if act := b.Lifecycle.Activity("stitchslop"); act.LastAgent.IsZero() {
		t.Fatal("the face's attach was not agent activity")
	}
	b.Stop()
	s.ended()
}
