package pixelle

import (
	"strings"
	"testing"
	"time"
)

// The agent's request id comes back exactly as it sent it, also when it is
// not valid Unicode once decoded (a lone surrogate escape, which a
// JavaScript client can make): decoding and re-encoding would turn it into
// U+FFFD and the agent would never see its answer.
func TestClientIDRestoredVerbatim(t *testing.T) {
	r := startRelay(t, nil)
	p := r.paired(t)
	const id = `"a\ud800b"`
	p.a.SendText(`{"type":"command","id":` + id + `,"command":{"method":"state.read"}}`)
	fwd := next(t, p.b)
	p.b.SendText(`{"type":"result","id":"` + fwd["id"].(string) + `","result":{"revision":1}}`)
	if got, want := nextRaw(t, p.a), `{"type":"result","id":`+id+`,"result":{"revision":1}}`; got != want {
		t.Fatalf("agent got %s\nwant %s", got, want)
	}
	// Relay-made answers carry it verbatim too.
	p.b.Close()
	<-p.b.Closed()
	for deadline := time.Now().Add(wait); r.browserAttached(p.id); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the relay still holds the closed browser")
		}
	}
	p.a.SendText(`{"type":"command","id":` + id + `,"command":{"method":"state.read"}}`)
	if got := nextRaw(t, p.a); !strings.HasPrefix(got, `{"type":"result","id":`+id+`,"error":{"code":"BROWSER_OFFLINE"`) {
		t.Fatalf("offline answer %s", got)
	}
}

func (r *testRelay) browserAttached(id string) bool {
	r.run().mu.Lock()
	defer r.run().mu.Unlock()
	return r.run().sessions[id] != nil && r.run().sessions[id].browser != nil
}
