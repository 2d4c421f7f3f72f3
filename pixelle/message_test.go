package pixelle

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/hubdev/hub/internal/race"
)

// parseMessageReference is parseMessage as it was written first, on
// encoding/json's map decoding: the meaning parseMessage must keep.
func parseMessageReference(data []byte) (*message, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' || !utf8.Valid(data) {
		return nil, errMalformed
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, errMalformed
	}
	str := func(key string, dst *string) bool {
		raw, ok := fields[key]
		return ok && json.Unmarshal(raw, dst) == nil
	}
	m := &message{}
	if !str("type", &m.Type) {
		return nil, errMalformed
	}
	switch m.Type {
	case "hello":
		okRole := str("role", &m.Role)
		okSess := str("sessionId", &m.SessionID)
		okTok := str("token", &m.Token)
		if !okRole || !okSess || !okTok {
			m.Problem = "hello needs string role, sessionId and token"
		}
	case "command", "result":
		if raw, ok := fields["id"]; ok {
			m.HasID = true
			var id string
			if json.Unmarshal(raw, &id) == nil && idLen(id) <= MaxRequestIDLen {
				m.ID, m.IDRaw, m.IDValid = id, bytes.TrimSpace(raw), true
			}
		}
		if !m.IDValid {
			m.Problem = "id must be a string of at most 100 characters"
			break
		}
		if m.Type == "command" {
			raw, ok := fields["command"]
			if !ok || !isObject(raw) {
				m.Problem = "command must be a JSON object"
				break
			}
			m.Command = raw
			break
		}
		m.Result, m.Error = fields["result"], fields["error"]
		if (m.Result == nil) == (m.Error == nil) {
			m.Problem = "a result carries exactly one of result or error"
		}
	}
	return m, nil
}

var parseSamples = []string{
	`{"type":"hello","role":"browser","sessionId":"s","token":"t"}`,
	`{"type":"hello","role":"agent","sessionId":1,"token":null}`,
	`{"type":"command","id":"c1","command":{"method":"state.read"}}`,
	`{"type":"command","id":null,"command":{"method":"state.read"}}`,
	`{"type":"result","id":"r1","result":{"revision":1}}`,
	`{"type":"result","id":"r1","error":{"code":"X"},"result":1}`,
	`{"type":"result","id":"r1","result":null}`,
	`{"type":"pair.create"}`, `{"type":"revoke"}`, `{"type":5}`, `{"type":null}`, `{}`, `[]`, `"x"`, `{"type":"command","id":"a","command":[1]}`,
	"{\"type\":\"command\",\"id\":\"\xff\",\"command\":{}}", ``, ` {"type":"x"} `, "\u00a0{\"type\":\"x\"}\u0085",
	// Duplicate keys: the last wins, as in a map.
	`{"type":"hello","type":"command","id":"a","id":"b","command":{},"command":{"x":[1,{"}":"]"}]}}`,
	// Escaped keys and values, whitespace everywhere, nested strings with brackets.
	" {\n\t\"\\u0074ype\" :\r\"comm\\u0061nd\" , \"i\\u0064\":\"\\ud800\\\"}\" ,\"command\" : { \"a\" : \"}]\\\\\" , \"b\":[ ] } } ",
	`{"type":"result","id":"x","error":{"code":"E","message":"a \"quoted\" }"},"extra":[1,2,{"result":3}]}`,
	`{"type":"result","id":"` + string(bytes.Repeat([]byte("é"), 100)) + `","result":-1.5e3}`,
	`{"type":"result","id":"` + string(bytes.Repeat([]byte("😀"), 51)) + `","result":true}`,
	`{"type":"command","id":"c","command":{}} x`, `{"type":"command",}`, `{"type":"x"`,
	`{"TYPE":"hello","Type":"command"}`,
}

// TestParseMessageMatchesReference pins the single-scan parser to the
// reflective decode it replaced, on the awkward cases.
func TestParseMessageMatchesReference(t *testing.T) {
	for _, s := range parseSamples {
		assertParsesLikeReference(t, []byte(s))
	}
}

func assertParsesLikeReference(t *testing.T, data []byte) {
	t.Helper()
	want, werr := parseMessageReference(data)
	got, err := parseMessage(data)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%q: error %v, want %v", data, err, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %+v\nwant %+v", data, got, want)
	}
}

func FuzzParseMessageMatchesReference(f *testing.F) {
	for _, s := range parseSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { assertParsesLikeReference(t, data) })
}

// TestParseMessageOwnsItsBytes: the relay keeps a command's id, command and
// result past the frame (a pending entry, the in-process caller), while the
// socket recycles the frame's buffer.
func TestParseMessageOwnsItsBytes(t *testing.T) {
	frame := []byte(`{"type":"result","id":"r1","result":{"revision":1}}`)
	m, err := parseMessage(frame)
	if err != nil {
		t.Fatal(err)
	}
	for i := range frame {
		frame[i] = 'x'
	}
	if string(m.IDRaw) != `"r1"` || string(m.Result) != `{"revision":1}` {
		t.Fatalf("the message shares the frame's buffer: id %s result %s", m.IDRaw, m.Result)
	}
}

// TestParseMessageAllocs bounds the parse of the two frames every command
// costs (the agent's command, the browser's result): a copy of the frame,
// the message and its id, not a map with a copy of every member.
func TestParseMessageAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates on its own")
	}
	for _, frame := range []string{
		`{"type":"command","id":"client-1","command":{"method":"nodes.upsert","expectedRevision":3,"operationId":"op-1","params":{"nodes":[{"id":"a","kind":"note","title":"T","content":"hello"}]}}}`,
		`{"type":"result","id":"r12-0a1b2c3d","result":` + stateFixture + `}`,
	} {
		b := []byte(frame)
		n := testing.AllocsPerRun(100, func() {
			if _, err := parseMessage(b); err != nil {
				t.Fatal(err)
			}
		})
		if n > 3 {
			t.Errorf("parsing %.40s… allocates %v times, want at most 3", frame, n)
		}
	}
}
