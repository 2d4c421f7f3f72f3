package mcpface

import (
	"encoding/json"
	"testing"
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
