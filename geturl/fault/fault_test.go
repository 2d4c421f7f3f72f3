package fault

import (
	"encoding/json"
	"testing"
)

func TestAnswerShape(t *testing.T) {
	e := (&Error{Code: "stale_read", Detail: "a<b>&c", Hint: "reread", Retryable: true, Action: ActionRereadThenRetry}).
		With("path", "/project/a&b").With("repair", "shadowed").With("lines", []int{1, 2})
	b, err := e.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ok":false,"errorCode":"stale_read","errorDetail":"a<b>&c","repairHint":"reread","retryable":true,` +
		`"agentAction":"reread_then_retry","path":"/project/a&b","lines":[1,2]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if !json.Valid(b) {
		t.Error("not JSON")
	}
	bare, _ := (&Error{Code: "x"}).MarshalJSON()
	if string(bare) != `{"ok":false,"errorCode":"x","retryable":false}` {
		t.Errorf("empty optional fields are left out: %s", bare)
	}
	var nilErr *Error
	if b, _ := nilErr.AppendJSON(nil); string(b) != "null" {
		t.Errorf("nil: %s", b)
	}
}

func TestCloneIsIndependent(t *testing.T) {
	e := (&Error{Code: "c"}).With("a", 1)
	c := e.Clone()
	c.With("b", 2)
	c.Hint = "changed"
	if len(e.Fields()) != 1 || e.Hint != "" {
		t.Errorf("the original changed: %+v", e)
	}
	if v, ok := c.Field("b"); !ok || v != 2 {
		t.Errorf("clone's field: %v %v", v, ok)
	}
}

func TestFieldThatFailsLeavesBuffer(t *testing.T) {
	e := (&Error{Code: "c"}).With("bad", make(chan int))
	if _, err := e.AppendJSON([]byte("x")); err == nil {
		t.Fatal("a channel encodes")
	}
}
