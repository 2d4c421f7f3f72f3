package transport

import (
	"encoding/json"
	"testing"

	"github.com/hubdev/hub/geturl/fault"
)

func TestErrorJSON(t *testing.T) {
	e := &Error{Code: CodeValueOutOfRange, Detail: "wait=5000 is outside 0..1500", Retryable: true,
		Action: fault.ActionFetchRepair, Repair: "https://h/v0/t/x?wait=1500&raw=a<b>&c"}
	e.With("route", "/x").With("ok", true)
	b, err := Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ok":false,"errorCode":"value_out_of_range","errorDetail":"wait=5000 is outside 0..1500","retryable":true,` +
		`"agentAction":"fetch_repair","repair":"https://h/v0/t/x?wait=1500&raw=a<b>&c","route":"/x"}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	b, _ = Marshal(&Error{Code: CodeNotFound})
	if string(b) != `{"ok":false,"errorCode":"not_found","retryable":false}` {
		t.Fatalf("minimal: %s", b)
	}
	if (&Error{Code: "x", Detail: "y"}).Error() != "x: y" {
		t.Fatal("Error()")
	}
}

// TestAppendJSON: appending keeps what the buffer held, an Appender writes
// the same bytes as MarshalJSON (null for a nil one), and other values go
// through encoding/json without HTML escaping.
func TestAppendJSON(t *testing.T) {
	e := (&Error{Code: "c", Detail: "a<b>&\"\n\u2028", Next: "https://h/v0/t/r?path=a&start=2"}).With("n", 3).With("list", []string{"x&y"})
	want, err := e.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	got, err := AppendJSON([]byte("prefix:"), e)
	if err != nil || string(got) != "prefix:"+string(want) {
		t.Fatalf("got %s, %v", got, err)
	}
	var nilErr *Error
	if got, _ := AppendJSON(nil, nilErr); string(got) != "null" {
		t.Fatalf("nil *Error: %s", got)
	}
	v := map[string]any{"u": "https://h/?a=1&b=<2>", "n": 1}
	got, _ = AppendJSON([]byte("x"), v)
	if string(got) != `x{"n":1,"u":"https://h/?a=1&b=<2>"}` {
		t.Fatalf("map: %s", got)
	}
	if got, err := AppendJSON([]byte("keep"), func() {}); err == nil || string(got) != "keep" {
		t.Fatalf("unencodable: %s, %v", got, err)
	}
}

// An engine's fault reaches the agent byte for byte, the recovery URLs the
// URL layer adds in their places among the standard fields.
func TestErrorOfKeepsTheFaultsBytes(t *testing.T) {
	f := (&fault.Error{Code: "edit_old_not_found", Detail: "old <text> & more", Hint: "reread ~", Retryable: true,
		Action: fault.ActionRereadThenRetry}).With("path", "/project/a").With("closest", map[string]any{"line": 3})
	want, err := f.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	e := ErrorOf(f)
	got, err := Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	e.Retry, e.Repair = "https://h/v0/t/e?run=retry.1&a=b", "https://h/v0/t/e?x"
	e.With("call", "auto:edit:1")
	got, _ = Marshal(e)
	wantURLs := `{"ok":false,"errorCode":"edit_old_not_found","errorDetail":"old <text> & more","repairHint":"reread ~",` +
		`"retryable":true,"agentAction":"reread_then_retry","repair":"https://h/v0/t/e?x","retry":"https://h/v0/t/e?run=retry.1&a=b",` +
		`"path":"/project/a","closest":{"line":3},"call":"auto:edit:1"}`
	if string(got) != wantURLs {
		t.Errorf("got  %s\nwant %s", got, wantURLs)
	}
	if len(f.Fields()) != 2 {
		t.Errorf("ErrorOf changed the fault: %d fields", len(f.Fields()))
	}
	if ErrorOf(nil) != nil {
		t.Error("a nil fault is a nil error")
	}
}
