package pixelle

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{
		`{"type":"hello","role":"browser","sessionId":"s","token":"t"}`,
		`{"type":"hello","role":"agent","sessionId":1,"token":null}`,
		`{"type":"command","id":"c1","command":{"method":"state.read"}}`,
		`{"type":"command","id":"` + string(make([]byte, 101)) + `","command":{}}`,
		`{"type":"result","id":"r1","result":{"revision":1}}`,
		`{"type":"result","id":"r1","error":{"code":"X"},"result":1}`,
		`{"type":"pair.create"}`, `{"type":"revoke"}`, `{"type":5}`, `{}`, `[]`, `"x"`, `{"type":"command","id":"a","command":[1]}`,
		"{\"type\":\"command\",\"id\":\"\xff\",\"command\":{}}", ``, ` {"type":"x"} `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseMessage(data)
		if err != nil {
			if m != nil {
				t.Fatal("message and error both returned")
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("invalid JSON accepted: %q", data)
		}
		if m.IDValid && len(utf16.Encode([]rune(m.ID))) > MaxRequestIDLen {
			t.Fatalf("bad id accepted: %q", m.ID)
		}
		if m.Type == "command" && m.Problem == "" {
			if !m.IDValid || !isObject(m.Command) {
				t.Fatalf("unusable command passed: %+v", m)
			}
			if fr := commandFrame("r1-AB", m.Command); !json.Valid(fr) {
				t.Fatalf("forwarded command is not JSON: %s", fr)
			}
		}
		if m.Type == "result" && m.Problem == "" {
			if (m.Result == nil) == (m.Error == nil) {
				t.Fatalf("result without exactly one payload: %+v", m)
			}
			fr := resultFrame(m.IDRaw, m)
			var back struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(fr, &back); err != nil || back.ID != m.ID {
				t.Fatalf("forwarded result %s: %v", fr, err)
			}
		}
	})
}

func FuzzValidateCommand(f *testing.F) {
	for _, s := range []string{
		`{"method":"state.read"}`,
		`{"method":"nodes.read","params":{"ids":["a","b"]}}`,
		`{"method":"nodes.upsert","expectedRevision":0,"operationId":"o","params":{"nodes":[{"id":"a","kind":"image","content":"data:image/png;base64,AA=="}],"edges":[{"id":"e","source":"a","target":"b"}]}}`,
		`{"method":"nodes.upsert","expectedRevision":1e400,"operationId":"o","params":{"nodes":[{"id":"a","x":1e999}]}}`,
		`{"method":"selection.set","expectedRevision":0,"operationId":"o","params":{"ids":[]}}`,
		`{"method":"project.import"}`, `null`, `{"method":"state.read"}{}`,
		"{\"method\":\"nodes.delete\",\"expectedRevision\":0,\"operationId\":\"o\",\"params\":{\"ids\":[\"a\"]},\"x\":\"\xff\"}",
		"{\"method\":\"nodes.upsert\",\"expectedRevision\":0,\"operationId\":\"o\",\"params\":{\"nodes\":[{\"id\":\"a\",\"content\":\"\xc3\"}]}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := ValidateCommand(data)
		if err != nil {
			return
		}
		if !json.Valid(out) || !isObject(out) || !utf8.Valid(out) {
			t.Fatalf("accepted %q as %q", data, out)
		}
		// Validation is idempotent on its own output.
		if _, err := ValidateCommand(out); err != nil {
			t.Fatalf("compacted command rejected: %v", err)
		}
	})
}

var codeRe = regexp.MustCompile(`^[0-9A-F]{12}$`)

func FuzzNormalizeCode(f *testing.F) {
	for _, s := range []string{"abcdef012345", " ABCDEF012345\n", "ABCDEF01234", "ÄBCDEF012345", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := normalizeCode(s)
		if ok != codeRe.MatchString(c) {
			t.Fatalf("normalizeCode(%q) = %q, %v", s, c, ok)
		}
	})
}

func FuzzParseRelayURL(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:4317", "http://localhost:1/", "ws://127.0.0.1:9", "http://[::1]:4317", "http://127.0.0.1:99999", "http://127.0.0.1.evil:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseRelayURL(s)
		if err != nil {
			return
		}
		if again, err := ParseRelayURL(u); err != nil || again != u {
			t.Fatalf("%q → %q → %q %v", s, u, again, err)
		}
		if !regexp.MustCompile(`^http://127\.0\.0\.1:[0-9]{1,5}$`).MatchString(u) {
			t.Fatalf("%q accepted as non-loopback %q", s, u)
		}
	})
}

func FuzzWorkspaceMarker(f *testing.F) {
	for _, s := range []string{`{"version":1,"workspaceId":"ws"}`, `{"version":1.0,"workspaceId":"ws"}`, `{"version":1,"workspaceId":"ws","workspaceId":"x"}`, `[`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, marker []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, MarkerFile), marker, 0o600); err != nil {
			t.Fatal(err)
		}
		ws, err := VerifyWorkspace(dir, "ws")
		if err == nil && (ws.WorkspaceID != "ws" || ws.Directory != dir) {
			t.Fatalf("accepted %q as %+v", marker, ws)
		}
	})
}
