package transport

import (
	"encoding/json"
	"testing"
)

func TestErrorJSON(t *testing.T) {
	e := &Error{Code: CodeValueOutOfRange, Detail: "wait=5000 is outside 0..1500", Retryable: true,
		Action: ActionFetchRepair, Repair: "https://h/v0/t/x?wait=1500&raw=a<b>&c"}
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
