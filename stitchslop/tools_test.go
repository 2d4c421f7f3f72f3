package stitchslop

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestSanitizeTools(t *testing.T) {
	big := `{"type":"object","description":"` + strings.Repeat("x", maxSchemaSize) + `"}`
	cases := []struct {
		name     string
		list     string
		keep     []string
		dropped  []string // reasons, by substring
		schemaOf map[string]string
	}{
		{"plain", `[{"name":"scene.describe","description":"d"}]`, []string{"scene.describe"}, nil,
			map[string]string{"scene.describe": `{"type":"object"}`}},
		{"bad names", `[{"name":"9lives"},{"name":"has space"},{"name":""},{"name":5},{"name":"` + strings.Repeat("a", 65) + `"},{"name":"ok_name-1.x"}]`,
			[]string{"ok_name-1.x"}, []string{"name must match", "name must match", "missing name", "missing name", "name must match"}, nil},
		{"shadowing", `[{"name":"wait_for_connection"},{"name":"pair"},{"name":"connection_status"},{"name":"render"}]`, []string{"render"},
			[]string{"shadows", "shadows", "shadows"}, nil}, // the bridge's own tools (§3.4, issue 28)
		{"duplicates keep the first", `[{"name":"a","description":"first"},{"name":"a","description":"second"}]`, []string{"a"}, []string{"duplicate"}, nil},
		{"schema shapes", `[{"name":"a","inputSchema":{"properties":{}}},{"name":"b","inputSchema":[1]},{"name":"c","inputSchema":{"type":"string"}},{"name":"d","input_schema":{"type":"object","required":["x"]}},{"name":"e","inputSchema":` + big + `}]`,
			[]string{"a", "d"}, []string{"not a JSON object", `type must be "object"`, "larger than"},
			map[string]string{"a": `{"properties":{},"type":"object"}`, "d": `{"type":"object","required":["x"]}`}},
		{"not an array", `{"name":"a"}`, nil, []string{"not an array"}, nil},
		{"entries not objects", `[1,"x",null]`, nil, []string{"not an object", "not an object", "missing name"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tools, dropped := sanitizeTools(json.RawMessage(tc.list))
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
				if want, ok := tc.schemaOf[tl.Name]; ok && string(tl.InputSchema) != want {
					t.Errorf("%s schema %s, want %s", tl.Name, tl.InputSchema, want)
				}
			}
			if fmt.Sprint(names) != fmt.Sprint(tc.keep) {
				t.Errorf("kept %v, want %v", names, tc.keep)
			}
			if len(dropped) != len(tc.dropped) {
				t.Fatalf("dropped %+v, want %d", dropped, len(tc.dropped))
			}
			for i, d := range dropped {
				if !strings.Contains(d.Reason, tc.dropped[i]) {
					t.Errorf("dropped[%d] = %+v, want reason containing %q", i, d, tc.dropped[i])
				}
			}
		})
	}
}

func TestSanitizeToolsCaps(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range maxTools + 5 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name":"t%d"}`, i)
	}
	b.WriteString("]")
	tools, dropped := sanitizeTools(json.RawMessage(b.String()))
	if len(tools) != maxTools || len(dropped) != 5 || !strings.Contains(dropped[0].Reason, "more than 256") {
		t.Fatalf("kept %d, dropped %+v", len(tools), dropped)
	}
	huge := `[{"name":"a","description":"` + strings.Repeat("x", maxToolList) + `"}]`
	tools, dropped = sanitizeTools(json.RawMessage(huge))
	if len(tools) != 0 || len(dropped) != 1 || !strings.Contains(dropped[0].Reason, "larger than") {
		t.Fatalf("a list over 1 MiB: kept %d, dropped %+v", len(tools), dropped)
	}
}

func TestWaitSeconds(t *testing.T) {
	cases := map[string]float64{
		``:                          90,
		`{}`:                        90,
		`{"timeoutSeconds":5}`:      5,
		`{"timeoutSeconds":0}`:      0,
		`{"timeoutSeconds":121}`:    120,
		`{"timeoutSeconds":1e9}`:    120,
		`{"timeoutSeconds":-1}`:     90,
		`{"timeoutSeconds":"soon"}`: 90,
	}
	for in, want := range cases {
		if got := waitSeconds(json.RawMessage(in)); got != want {
			t.Errorf("waitSeconds(%s) = %v, want %v", in, got, want)
		}
	}
}

func TestEnvelopeResult(t *testing.T) {
	cases := []struct {
		name    string
		env     string
		isError bool
		text    string // exact
		image   string // mime, "" for none
	}{
		{"ok", `{"id":3,"ok":true,"n":1}`, false, `{"n":1,"ok":true}`, ""},
		{"say leads", `{"id":3,"ok":true,"say":"Done."}`, false, "Done.\n" + `{"ok":true,"say":"Done."}`, ""},
		{"ok false", `{"id":3,"ok":false,"message":"No."}`, true, `{"message":"No.","ok":false}`, ""},
		{"image", `{"id":3,"ok":true,"dataUrl":"data:image/png;base64,QUJD"}`, false, `{"ok":true}`, "image/png"},
		{"bad dataUrl kept", `{"ok":true,"dataUrl":"data:image/png;base64,@@@"}`, false, `{"dataUrl":"data:image/png;base64,@@@","ok":true}`, ""},
		{"not an object", `[1]`, true, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := envelopeResult([]byte(tc.env))
			if r.IsError != tc.isError {
				t.Errorf("isError %v", r.IsError)
			}
			text := r.Content[0]["text"].(string)
			if tc.text != "" && text != tc.text {
				t.Errorf("text %q, want %q", text, tc.text)
			}
			if tc.image == "" && len(r.Content) != 1 {
				t.Errorf("unexpected blocks %+v", r.Content)
			}
			if tc.image != "" && (len(r.Content) != 2 || r.Content[1]["mimeType"] != tc.image || r.Content[1]["data"] != "QUJD") {
				t.Errorf("image block %+v", r.Content)
			}
		})
	}
}

// The dropped-tools report is bounded too: a 1 MiB list of tiny bad
// entries would otherwise mean ~100k log lines per frame and a /status
// answer to match. The first maxDropped are itemised, the rest counted.
func TestSanitizeToolsDroppedReportBounded(t *testing.T) {
	const n = 5000
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"name":"9bad"}`)
	}
	b.WriteString("]")
	tools, dropped := sanitizeTools(json.RawMessage(b.String()))
	if len(tools) != 0 {
		t.Fatalf("kept %d", len(tools))
	}
	if len(dropped) != maxDropped+1 {
		t.Fatalf("%d dropped entries reported, want %d itemised plus one summary", len(dropped), maxDropped)
	}
	last := dropped[len(dropped)-1]
	if want := fmt.Sprintf("%d more", n-maxDropped); last.Name != "*" || !strings.Contains(last.Reason, want) {
		t.Fatalf("summary %+v, want it to count %s", last, want)
	}
}
