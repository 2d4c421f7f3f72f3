package hub

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

func TestDirsFromEnv(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_STATE_HOME", "relative/ignored")
	t.Setenv("XDG_CACHE_HOME", "/c")
	d, err := DirsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	want := Dirs{Home: "/home/u", Config: "/home/u/.config/hub", State: "/home/u/.local/state/hub", Log: "/home/u/.local/state/hub", Cache: "/c"}
	if d != want {
		t.Fatalf("got %+v\nwant %+v", d, want)
	}
	t.Chdir("/tmp")
	t.Setenv("HOME", "rel")
	if d, err := DirsFromEnv(); err != nil || d.Home != "/tmp/rel" || d.State != "/tmp/rel/.local/state/hub" {
		t.Fatalf("relative HOME: %+v, %v", d, err)
	}
	if got := ExpandHome("~/.stitchslop", "/home/u"); got != "/home/u/.stitchslop" {
		t.Fatalf("ExpandHome = %q", got)
	}
	if got := ExpandHome("/abs", "/home/u"); got != "/abs" {
		t.Fatalf("ExpandHome = %q", got)
	}
}

func TestNewLogger(t *testing.T) {
	var buf bytes.Buffer
	log, err := NewLogger(&buf, LogOptions{Level: "warn", Format: "json"})
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hidden")
	log.Warn("shown", "k", 1)
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil || m["msg"] != "shown" {
		t.Fatalf("want one JSON line with msg=shown, got %q", buf.String())
	}
	buf.Reset()
	log, _ = NewLogger(&buf, LogOptions{Format: "text"})
	log.Info("hello")
	if !strings.Contains(buf.String(), "hello") || strings.Contains(buf.String(), "\x1b[") {
		t.Fatalf("text log to a non-terminal must have no colour: %q", buf.String())
	}
	if _, err := NewLogger(&buf, LogOptions{Level: "loud"}); err == nil {
		t.Fatal("bad level accepted")
	}
	if _, err := NewLogger(&buf, LogOptions{Format: "xml"}); err == nil {
		t.Fatal("bad format accepted")
	}
}

// ColorAllowed against a real terminal device (a pty master is one), so the
// NO_COLOR cases can fail: a bytes.Buffer is never a terminal.
func TestColorAllowedHonoursNoColor(t *testing.T) {
	tty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skip("no pty here:", err)
	}
	defer tty.Close()
	for _, tc := range []struct {
		value string
		set   bool
		want  bool
	}{
		{"", false, true},
		{"", true, true}, // NO_COLOR= (empty) does not disable colour
		{"1", true, false},
		{"false", true, false}, // any non-empty value does
	} {
		t.Setenv("NO_COLOR", tc.value) // restored after the test
		if !tc.set {
			os.Unsetenv("NO_COLOR")
		}
		if got := ColorAllowed(tty); got != tc.want {
			t.Errorf("NO_COLOR=%q (set %v) on a terminal: colour %v, want %v", tc.value, tc.set, got, tc.want)
		}
	}
	if ColorAllowed(&bytes.Buffer{}) {
		t.Error("colour for something that is not a terminal")
	}
}

func TestWriteJSONAndReadBody(t *testing.T) {
	w := httptest.NewRecorder()
	WriteJSON(w, 201, map[string]int{"a": 1})
	if w.Code != 201 || w.Header().Get("Content-Type") != "application/json" || w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("headers %v", w.Header())
	}
	var v struct{ A int }
	r := httptest.NewRequest("POST", "/", strings.NewReader(`{"a":2}`))
	if err := ReadJSONBody(r, 1024, &v); err != nil || v.A != 2 {
		t.Fatalf("ReadJSONBody = %v, %+v", err, v)
	}
	r = httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat(" ", 2000)))
	if err := ReadJSONBody(r, 1024, &v); !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("oversized body: %v", err)
	}
	r = httptest.NewRequest("POST", "/", strings.NewReader(`{`))
	if err := ReadJSONBody(r, 1024, &v); err == nil {
		t.Fatal("bad JSON accepted")
	}
}
