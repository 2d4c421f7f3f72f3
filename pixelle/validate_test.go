package pixelle

import (
	"fmt"
	"strings"
	"testing"
)

func TestValidateCommand(t *testing.T) {
	ids := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf(`"n%d"`, i)
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	nodes := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf(`{"id":"n%d"}`, i)
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	mut := func(method, params string) string {
		return fmt.Sprintf(`{"method":%q,"expectedRevision":0,"operationId":"op-1","params":%s}`, method, params)
	}
	upsertNode := func(fields string) string { return mut("nodes.upsert", `{"nodes":[{"id":"a",`+fields+`}]}`) }
	png := "data:image/png;base64,iVBORw0KGgo="
	for _, tc := range []struct {
		cmd  string
		want string // "" = valid; else a substring of the error
	}{
		{`{"method":"state.read"}`, ""},
		{` {"method":"selection.read"} `, ""},
		{`{"method":"events.read"}`, ""},
		{`{"method":"project.export"}`, ""},
		{`{"method":"nodes.read","params":{"ids":["brief"]}}`, ""},
		{`{"method":"nodes.read","params":{"ids":` + ids(100) + `}}`, ""},
		{`{"method":"nodes.read","params":{"ids":` + ids(101) + `}}`, "101 IDs"},
		{`{"method":"nodes.read","params":{"ids":[]}}`, "0 IDs"},
		{`{"method":"nodes.read"}`, "needs params"},
		{`{"method":"nodes.read","params":{"ids":["bad id"]}}`, `params.ids[0] "bad id"`},
		{`{"method":"nodes.read","params":{"ids":["` + strings.Repeat("a", 81) + `"]}}`, "1-80"},
		{`{"method":"state.read","params":{}}`, "takes no params"},
		{`{"method":"state.read","expectedRevision":1}`, "is a read"},
		{`{"method":"project.import","params":{}}`, "browser-only"},
		{`{"method":"shell.exec"}`, `unknown method "shell.exec"`},
		{`{"method":5}`, "method must be a string"},
		{`{}`, "method is required"},
		{`[]`, "must be a JSON object"},
		{`{"method":"state.read"`, "not valid JSON"},
		{`{"method":"state.read","extra":1}`, `unknown field "extra"`},
		// The relay closes a text frame that is not UTF-8 (1007) before
		// routing it; the client must say so instead of reporting an
		// unknown outcome for a command that never left.
		{"{\"method\":\"nodes.upsert\",\"expectedRevision\":0,\"operationId\":\"x\",\"params\":{\"nodes\":[{\"id\":\"a\",\"title\":\"\xff\"}]}}", "UTF-8"},
		{mut("nodes.delete", `{"ids":["a"]}`), ""},
		{mut("selection.set", `{"ids":[]}`), ""},
		{mut("viewport.focus", `{"ids":["a"]}`), ""},
		{mut("viewport.focus", `{"ids":[]}`), "0 IDs"},
		{`{"method":"nodes.delete","operationId":"x","params":{"ids":["a"]}}`, "expectedRevision is required"},
		{`{"method":"nodes.delete","expectedRevision":-1,"operationId":"x","params":{"ids":["a"]}}`, "non-negative integer"},
		{`{"method":"nodes.delete","expectedRevision":1.5,"operationId":"x","params":{"ids":["a"]}}`, "non-negative integer"},
		{`{"method":"nodes.delete","expectedRevision":null,"operationId":"x","params":{"ids":["a"]}}`, "non-negative integer"},
		{`{"method":"nodes.delete","expectedRevision":"3","operationId":"x","params":{"ids":["a"]}}`, "non-negative integer"},
		{`{"method":"nodes.delete","expectedRevision":1,"params":{"ids":["a"]}}`, "operationId is required"},
		{`{"method":"nodes.delete","expectedRevision":1,"operationId":"a b","params":{"ids":["a"]}}`, `operationId "a b"`},
		{upsertNode(`"kind":"html","title":"Concept","content":"<h1>Hello</h1>","x":460,"y":500`), ""},
		{mut("nodes.upsert", `{"nodes":[],"edges":[{"id":"e","source":"a","target":"b"}]}`), ""},
		{mut("nodes.upsert", `{"nodes":`+nodes(30)+`}`), ""},
		{mut("nodes.upsert", `{"nodes":`+nodes(31)+`}`), "at most 30"},
		{mut("nodes.upsert", `{}`), "at least one node or edge"},
		{mut("nodes.upsert", `{"nodes":[{"id":"a"},{"id":"a"}]}`), "appears twice"},
		{upsertNode(`"kind":"video"`), "must be note, html or image"},
		{upsertNode(`"title":"` + strings.Repeat("t", 120) + `"`), ""},
		{upsertNode(`"title":"` + strings.Repeat("é", 121) + `"`), "121 characters"},
		{upsertNode(`"title":7`), "title must be a string"},
		{upsertNode(`"kind":"note","content":"` + strings.Repeat("c", 100000) + `"`), ""},
		{upsertNode(`"kind":"note","content":"` + strings.Repeat("c", 100001) + `"`), "at most 100000"},
		{upsertNode(`"kind":"image","content":"` + png + `"`), ""},
		{upsertNode(`"kind":"image","content":"data:image/gif;base64,R0lG"`), "PNG, JPEG or WebP"},
		{upsertNode(`"kind":"image","content":"data:image/png;base64,` + strings.Repeat("A", 900000) + `"`), "at most 900000"},
		{upsertNode(`"content":"data:image/svg+xml;base64,PHN2Zz4="`), "PNG, JPEG or WebP"},
		// Without a kind, only an image data URL is judged as an image: a
		// note patched to text that starts with "data:" is fine.
		{upsertNode(`"content":"data: revenue by quarter"`), ""},
		{upsertNode(`"kind":"note","content":"data:image/gif;base64,R0lG"`), ""},
		{upsertNode(`"x":10000,"y":-10000`), ""},
		{upsertNode(`"x":10000.5`), "within +/-10000"},
		{upsertNode(`"y":"1"`), "finite number"},
		{upsertNode(`"x":null`), "finite number"},
		{upsertNode(`"width":3`), `unknown field "width"`},
		{mut("nodes.upsert", `{"edges":[{"id":"e","source":"a"}]}`), "target is required"},
		{mut("nodes.upsert", `{"edges":[{"id":"e","source":"a","target":"b c"}]}`), `target "b c"`},
		{mut("nodes.upsert", `{"nodes":{"id":"a"}}`), "array of node objects"},
		{mut("nodes.upsert", `{"nodes":[7]}`), "params.nodes[0] must be a JSON object"},
	} {
		_, err := ValidateCommand([]byte(tc.cmd))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%.80s: unexpected error %v", tc.cmd, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%.80s: error %v, want it to mention %q", tc.cmd, err, tc.want)
		}
	}
	if _, err := ValidateCommand([]byte(`{"method":"state.read","pad":"` + strings.Repeat("a", 3<<20) + `"}`)); err == nil || !strings.Contains(err.Error(), "bytes") {
		t.Errorf("oversized command: %v", err)
	}
}
