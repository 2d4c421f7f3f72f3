package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzMembers: of a valid JSON object, members finds what encoding/json
// finds, or refuses it for a reason it has (escaped or repeated keys,
// nesting past maxDepth).
func FuzzMembers(f *testing.F) {
	for _, tc := range paramCases {
		f.Add(tc.params)
	}
	f.Add(` { "a" : "}\"]" , "b":[{"c":[]}], "d" : -1.5e3 ,"e":true} `)
	f.Fuzz(func(t *testing.T, raw string) {
		var want map[string]json.RawMessage
		if json.Unmarshal([]byte(raw), &want) != nil || want == nil {
			if members([]byte(raw), 1, func(k, v []byte) bool { return true }) && json.Valid([]byte(raw)) {
				t.Fatalf("members accepted %q, which is not an object", raw)
			}
			return
		}
		got := map[string]string{}
		dup := false
		ok := members([]byte(raw), 1, func(k, v []byte) bool {
			_, seen := got[string(k)]
			dup = dup || seen
			got[string(k)] = string(v)
			return true
		})
		if !ok {
			if !strings.Contains(raw, `\`) && strings.Count(raw, "[")+strings.Count(raw, "{") < maxDepth {
				t.Fatalf("members refused %q", raw)
			}
			return
		}
		if dup || !utf8.ValidString(raw) { // encoding/json rewrites invalid UTF-8 in keys
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%q: members found %q, encoding/json %q", raw, got, want)
		}
		for k, v := range want {
			if got[k] != string(v) {
				t.Fatalf("%q: member %q is %q, encoding/json says %q", raw, k, got[k], v)
			}
		}
	})
}
