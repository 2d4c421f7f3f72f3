package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestCheckSchema(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", `{"type":"object"}`},
		{"null", `{"type":"object"}`},
		{`{"type":"object","required":["a"]}`, `{"type":"object","required":["a"]}`},
		{`{"properties":{}}`, `{"properties":{},"type":"object"}`},
		{`{"type":"array"}`, ""},
		{`{"type":["object"]}`, ""},
		{`[]`, ""},
		{`true`, ""},
		{`{`, ""},
	}
	for _, tc := range cases {
		got, err := CheckSchema(json.RawMessage(tc.in))
		if tc.want == "" {
			if err == nil {
				t.Errorf("CheckSchema(%s) accepted %s", tc.in, got)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("CheckSchema(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

// FuzzForwardSchema: a page's input schema is bytes from a web page. Any
// of them, through Forwarder.Sync, is either dropped with a reason or
// listed to clients as an object schema ("type" is "object"; JSON Schema
// keywords are case-sensitive, so a "Type" beside it is only an unknown
// keyword), and nothing panics.
func FuzzForwardSchema(f *testing.F) {
	for _, s := range []string{``, `null`, `{}`, `{"type":"object"}`, `{"properties":{"a":{"type":"string"}}}`,
		`{"type":"array"}`, `{"type":"object","Type":"array"}`, `{"TYPE":"string"}`, `{"type":"object","type":"array"}`,
		`{"type":"array","type":"object"}`, `{"type" : "object" }`, `{"type":"\u006fbject"}`, `[]`, `{`, `{"type":"object"}x`,
		`{"type":"object","required":"a"}`, `{"type":"object","properties":5}`, "{\"\xff\":1}", `{"type":"object","$ref":"#/x"}`} {
		f.Add(s)
	}
	s := testServer(Options{})
	fw := s.Forward(nil, nil)
	c := serveRaw(f, s)
	c.initialize("2025-06-18")
	id := 0
	f.Fuzz(func(t *testing.T, schema string) {
		c.t = t
		tl := &mcp.Tool{Name: "p", InputSchema: json.RawMessage(schema)}
		if schema == "" {
			tl.InputSchema = nil
		}
		_, dropped := fw.Sync(context.Background(), []*mcp.Tool{tl})
		if len(dropped) > 0 {
			if dropped[0].Reason == "" {
				t.Fatalf("%q dropped without a reason", schema)
			}
			return
		}
		id++
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
		var resp struct {
			ID     int `json:"id"`
			Result struct {
				Tools []struct {
					Name        string          `json:"name"`
					InputSchema json.RawMessage `json:"inputSchema"`
				} `json:"tools"`
			} `json:"result"`
		}
		for resp.ID != id {
			if err := json.Unmarshal([]byte(c.recv()), &resp); err != nil {
				t.Fatal(err)
			}
		}
		for _, lt := range resp.Result.Tools {
			if lt.Name != "p" {
				continue
			}
			var m map[string]json.RawMessage
			if json.Unmarshal(lt.InputSchema, &m) != nil || string(m["type"]) != `"object"` {
				t.Fatalf("schema %q listed as %s", schema, lt.InputSchema)
			}
			return
		}
		t.Fatalf("schema %q: accepted but not listed", schema)
	})
}
