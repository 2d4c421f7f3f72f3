package companion

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// The strict decoder: one JSON object of known, unrepeated fields, at
// most MaxBody bytes, nothing after it.
func TestDecode(t *testing.T) {
	cases := []struct {
		name, body string
		ok         bool
	}{
		{"valid", `{"seq":1,"bindings":[{"binding":"b1","generation":2}]}`, true},
		{"empty object", `{}`, true},
		{"unknown field", `{"seq":1,"extra":1}`, false},
		{"unknown nested field", `{"seq":1,"bindings":[{"binding":"b","generation":1,"x":1}]}`, false},
		{"repeated field", `{"seq":1,"seq":2}`, false},
		{"case alias", `{"seq":1,"SEQ":2}`, false},
		{"upper case", `{"Seq":1}`, false},
		{"unicode fold alias", `{"ſeq":1}`, false},
		{"repeated nested field", `{"seq":1,"bindings":[{"binding":"a","binding":"b"}]}`, false},
		{"trailing object", `{"seq":1}{"seq":2}`, false},
		{"trailing garbage", `{"seq":1} x`, false},
		{"array", `[{"seq":1}]`, false},
		{"null", `null`, false},
		{"string", `"x"`, false},
		{"float seq", `{"seq":1.5}`, false},
		{"string seq", `{"seq":"1"}`, false},
		{"not UTF-8", "{\"seq\":1,\"bindings\":[{\"binding\":\"\xff\"}]}", false},
		{"too deep", `{"bindings":[{"binding":{"a":{"b":[[1]]}}}]}`, false},
		{"truncated", `{"seq":1`, false},
		{"whitespace around", " \n{\"seq\":1}\n ", true},
	}
	for _, c := range cases {
		var v heartbeatBody
		err := decode([]byte(c.body), &v)
		if (err == nil) != c.ok {
			t.Errorf("%s: %q: err %v, want ok=%v", c.name, c.body, err, c.ok)
		}
	}
	big := `{"seq":1,"bindings":[` + strings.Repeat(`{"binding":"b","generation":1},`, 200) + `{}]}`
	if err := decode([]byte(big), &heartbeatBody{}); !errors.Is(err, errTooLarge) {
		t.Errorf("a %d-byte body: %v", len(big), err)
	}
}

// Over the wire: too large is 413 before authentication matters, strict
// failures are 400.
func TestBodyLimits(t *testing.T) {
	h := newHarness(t)
	big := `{"name":"` + strings.Repeat("a", MaxBody) + `","secret":"x"}`
	if a := h.do("POST", "/companion/pair", "", big); a.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("large pair: %d %s", a.status, a.raw)
	}
	for _, body := range []string{`{"name":"x","secret":"` + newSecret() + `","admin":true}`, `{"name":"x","name":"y","secret":"` + newSecret() + `"}`,
		`{"name":"","secret":"` + newSecret() + `"}`, `{"name":"x\u0007","secret":"` + newSecret() + `"}`, `{"name":"` + strings.Repeat("é", 65) + `","secret":"` + newSecret() + `"}`,
		`{"name":"x","secret":"short"}`, `{"name":"x","secret":"` + newSecret() + `="}`} {
		if a := h.do("POST", "/companion/pair", "", body); a.status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", body, a.status, a.raw)
		}
	}
	if len(h.svc.Overview().Pending) != 0 {
		t.Error("a refused body made a request")
	}
}

// FuzzDecode: the decoder never panics, never accepts more than MaxBody
// bytes, and what it accepts is one JSON object without unknown fields.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"seq":1,"bindings":[{"binding":"b1","generation":2}]}`, `{"name":"x","secret":"y"}`,
		`{"project":"p","conversation":"https://a/b"}`, `{"binding":"b"}`, `{"seq":1,"seq":1}`, `[]`, `{"a":{"b":{"c":[1]}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		targets := []any{&pairBody{}, &bindBody{}, &heartbeatBody{}, &disconnectBody{}}
		for _, v := range targets {
			if err := decode(b, v); err == nil {
				if len(b) > MaxBody {
					t.Fatalf("accepted %d bytes", len(b))
				}
				var m map[string]json.RawMessage
				if json.Unmarshal(b, &m) != nil {
					t.Fatalf("accepted a non-object %q", b)
				}
				want, _ := json.Marshal(v)
				var known map[string]json.RawMessage
				json.Unmarshal(want, &known)
				for k := range m {
					if _, ok := known[k]; !ok {
						t.Fatalf("accepted unknown field %q", k)
					}
				}
				// The field checks after decoding take whatever it let through.
				switch v := v.(type) {
				case *pairBody:
					if checkName(v.Name) == nil && (v.Name == "" || len([]rune(v.Name)) > maxName) {
						t.Fatalf("name %q accepted", v.Name)
					}
					if _, ok := secretHash(v.Secret); ok && len(v.Secret) != 43 {
						t.Fatalf("secret %q accepted", v.Secret)
					}
				case *bindBody:
					if checkConversation(v.Conversation) == nil && (len(v.Conversation) > maxConversation || strings.ContainsAny(v.Conversation, "?# \n")) {
						t.Fatalf("conversation %q accepted", v.Conversation)
					}
				}
			}
		}
	})
}
