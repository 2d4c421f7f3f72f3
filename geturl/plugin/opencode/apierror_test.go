package opencode

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeAPIError: an error answer is up to 8 MiB from whatever serves
// the OpenCode port; what reaches the agent as the error's detail is
// short whatever the answer holds, and valid UTF-8 when the answer's
// strings were.
func FuzzDecodeAPIError(f *testing.F) {
	f.Add(500, []byte(`{"name":"UnknownError","data":{"message":"boom"}}`))
	f.Add(404, []byte(`{"_tag":"NotFound","message":"no session"}`))
	f.Add(400, []byte(`{"name":"`+strings.Repeat("N", 5000)+`"}`))
	f.Add(502, []byte(`{"message":"a`+strings.Repeat("é", 200)+`"}`))
	f.Add(500, []byte(`not json`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		msg := decodeAPIError(status, body).Error()
		if len(msg) > 600 {
			t.Fatalf("a %d-byte answer makes a %d-byte error", len(body), len(msg))
		}
		var m map[string]any
		if utf8.Valid(body) && json.Unmarshal(body, &m) == nil && !utf8.ValidString(msg) {
			t.Fatalf("valid UTF-8 in, invalid out: %q", msg)
		}
	})
}
