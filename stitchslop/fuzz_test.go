package stitchslop

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub/mcpserver"
)

func FuzzParseHandshake(f *testing.F) {
	for _, s := range []string{
		`{"token":"tok_x"}`, `{"secret":"s"}`, `{"secret":"s","token":"t"}`, `{"token":null}`, `{"token":5}`,
		`{}`, `[]`, `null`, `{"token":"` + strings.Repeat("a", 2000) + `"}`, "\x00\xff", `{"token":"\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		hf, err := parseHandshake(b)
		if err != nil {
			return
		}
		if hf.Token == "" && hf.Secret == "" {
			t.Fatal("accepted a frame with no credential")
		}
		if len(hf.Token) > 1024 || len(hf.Secret) > 1024 || len(b) > MaxFirstFrame {
			t.Fatal("limits not enforced")
		}
	})
}

// FuzzPageFrame feeds authenticated page frames (replies, tool lists,
// junk) to the frame handler: nothing may panic, and a pending call gets
// at most its own reply.
func FuzzPageFrame(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"ok":true}`, `{"id":"1"}`, `{"id":1.5}`, `{"id":null,"tools":[]}`,
		`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`, `{"tools":[{"name":"wait_for_connection"}]}`,
		`{"tools":5}`, `[]`, `{`, `{"id":99999999999999999999}`,
	} {
		f.Add([]byte(s))
	}
	s, err := New(&Config{Origin: testOrigin})
	if err != nil {
		f.Fatal(err)
	}
	r := newRun(s, &adapters.Env{Log: slog.New(slog.DiscardHandler)}, runPlace{dir: f.TempDir()})
	p := newPageConn(r, nil, testOrigin)
	f.Fuzz(func(t *testing.T, b []byte) {
		r.mu.Lock()
		r.page = p
		r.mu.Unlock()
		pc := newPendingCall()
		p.mu.Lock()
		p.pending = map[int64]*pendingCall{1: pc}
		p.mu.Unlock()
		r.pageFrame(p, b)
		select {
		case <-pc.done:
			r := pc.res
			var m struct {
				ID int64 `json:"id"`
			}
			if json.Unmarshal(r.data, &m) != nil || m.ID != 1 {
				t.Fatalf("pending call 1 got a reply that is not id 1: %s", r.data)
			}
		default:
		}
		tools, _ := r.Tools()
		for _, tl := range tools {
			if !toolNameRE().MatchString(tl.Name) || isBridgeTool(tl.Name) || !isJSONObject(tl.InputSchema) {
				t.Fatalf("unsanitised tool %+v", tl)
			}
		}
	})
}

func FuzzEnvelopeResult(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"ok":true}`, `{"ok":false,"message":"m"}`, `{"say":"hi","dataUrl":"data:image/png;base64,QUJD"}`,
		`{"dataUrl":"data:;base64,"}`, `{"dataUrl":5}`, `[]`, `"x"`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := envelopeResult(b)
		if len(r.Content) == 0 || r.Content[0]["type"] != "text" {
			t.Fatal("no leading text block")
		}
		if strings.Contains(r.Content[0]["text"].(string), `"id":`) {
			var m map[string]json.RawMessage
			if json.Unmarshal(b, &m) == nil && m != nil {
				text := r.Content[0]["text"].(string)
				if i := strings.LastIndex(text, "\n{"); i >= 0 {
					text = text[i+1:]
				}
				var out map[string]json.RawMessage
				if json.Unmarshal([]byte(text), &out) == nil {
					if _, has := out["id"]; has {
						t.Fatal("transport id kept")
					}
				}
			}
		}
	})
}

// FuzzEnvelopeSDK: the fast rendering of an envelope is the one
// envelopeResult gives, byte for byte on the wire.
func FuzzEnvelopeSDK(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"ok":true}`, `{"ok":false,"message":"m"}`, `{"say":"hi","dataUrl":"data:image/png;base64,QUJD"}`,
		`{"dataUrl":"data:;base64,"}`, `{"dataUrl":5}`, `[]`, `"x"`, ``, `null`, `{}`,
		`{"id":7,"ok":true,"say":"<b>é</b>\u2028","objects":[{"a":"x & y"}, 1.50e3, null],"z":{"k":"\"\\"}}`,
		` { "ok" : false , "say" : " " , "dataUrl" : "data:image/png;base64,QQ==" } `,
		`{"b":1,"a":2,"b":3}`, `{"a\u0062":1}`, `{"<":1}`, "{\"\xff\":1}", `{"say":null}`, `{"say":"x","ok":"false"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, env []byte) {
		want, err := json.Marshal(envelopeResult(env).sdk())
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(envelopeSDK(env))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("envelope %q\n got %s\nwant %s", env, got, want)
		}
	})
}

// A page's usual envelopes take the fast rendering (else FuzzEnvelopeSDK
// would compare the slow one with itself).
func TestFastEnvelopeTaken(t *testing.T) {
	for _, env := range []string{
		`{"id":1,"ok":true}`, `{"id":2,"ok":true,"say":"Done <now>.","objects":[{"name":"a & b"}],"count":3}`,
		`{"id":3,"ok":true,"dataUrl":"data:image/png;base64,QUJD","width":10}`, `{"ok":false,"error":"bad_args","message":"limit must be a number"}`,
	} {
		if _, ok := fastEnvelope([]byte(env)); !ok {
			t.Errorf("%s took the slow path", env)
		}
	}
}

// FuzzMCPStream feeds arbitrary stdin to the MCP face: every output line
// must be one JSON object, and nothing may panic or hang.
func FuzzMCPStream(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait_for_connection","arguments":{"timeoutSeconds":120}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"scene.describe"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{`, "\n\n", `{"id":{},"method":"ping"}`, `{"id":null,"method":"x"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`,
	} {
		f.Add(s)
	}
	s, err := New(&Config{Origin: testOrigin})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var out adaptertest.SyncBuffer
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s.ServeMCP(ctx, &mcpserver.LineTransport{In: strings.NewReader(in), Out: &out}, nil)
		for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if line == "" {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil || m["jsonrpc"] != "2.0" {
				t.Fatalf("output line is not JSON-RPC: %q", line)
			}
		}
	})
}

func FuzzParseClientArgs(f *testing.F) {
	for _, s := range []string{"scene.describe {} --out x.png", "--port 8787 status", "--port=0", "--config-dir", "-- --out"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ca, err := parseClientArgs(strings.Fields(s), true)
		if err == nil && (ca.port < 0 || ca.port > 65535) {
			t.Fatal("port out of range accepted")
		}
	})
}

// FuzzSaveFiles feeds page replies (untrusted) to the writer of their
// files: nothing may panic, everything written is a plain file directly
// in the directory under a name that is not hidden, and what the agent
// reads afterwards holds no bulk.
func FuzzSaveFiles(f *testing.F) {
	png := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBytes)
	for _, s := range []string{
		`{"ok":true,"dataUrl":"` + png + `","name":"a.png"}`,
		`{"files":[{"name":"../x.png","dataUrl":"` + png + `"},{"name":"b.dst","dataUrl":"data:x/y;base64,AAAA"}]}`,
		`{"text":"<svg/>"}`, `{"name":".x.svg","text":"t"}`, `[]`, `{"a":{"b":[{"name":"c.pes","dataUrl":"data:a/b;base64,QQ=="}]}}`,
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, env []byte, overwrite bool) {
		dir := t.TempDir()
		out, saved, _, err := saveFiles(env, SaveOptions{Dir: dir, Overwrite: overwrite, TextFile: "t.svg", Command: "c"})
		for _, s := range saved {
			if filepath.Dir(s.Path) != dir || strings.HasPrefix(filepath.Base(s.Path), ".") {
				t.Fatalf("wrote %s", s.Path)
			}
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
				t.Fatalf("left %s (%v)", e.Name(), e.Type())
			}
		}
		if err == nil && !json.Valid(out) {
			t.Fatalf("reply after saving is not JSON: %q", out)
		}
		left := leaveOutBulk(env, bulkHowShell)
		if json.Valid(env) && !json.Valid(left) {
			t.Fatalf("bulk left out of valid JSON made %q", left)
		}
	})
}

// FuzzVoiceAnswer feeds tab answers to voice.listen (untrusted) to the
// listener: nothing panics, every line printed is JSON of a known type,
// and an utterance printed is bounded.
func FuzzVoiceAnswer(f *testing.F) {
	for _, s := range []string{
		`{"ok":true,"voice":"on","heard":"make it red","atMs":1,"selection":["a"]}`,
		`{"ok":false,"error":"no_page"}`, `{"ok":false,"error":"unknown_command"}`, `{"ok":true,"voice":false}`,
		`{"ok":true,"heard":12}`, `{"ok":true,"atMs":{"x":1},"heard":"x"}`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, env []byte) {
		var lines []voiceEvent
		l := &voiceListener{emit: func(ev voiceEvent) error {
			b, err := json.Marshal(ev)
			if err != nil || !json.Valid(b) {
				t.Fatalf("event %+v is not JSON: %v", ev, err)
			}
			lines = append(lines, ev)
			return nil
		}}
		l.answer(env)
		for _, ev := range lines {
			switch ev.Type {
			case "heard", "connected", "disconnected", "voice-on", "voice-off", "unavailable":
			default:
				t.Fatalf("event type %q", ev.Type)
			}
			if len(ev.Selection) > maxSelection {
				t.Fatalf("a selection of %d bytes", len(ev.Selection))
			}
			if len([]rune(ev.Heard)) > maxHeard+1 {
				t.Fatalf("heard of %d runes", len([]rune(ev.Heard)))
			}
		}
	})
}
