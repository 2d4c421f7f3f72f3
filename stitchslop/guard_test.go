package stitchslop

import (
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// A big first frame is refused before gws reads (or allocates) it.
func TestHugeFirstFrameRefusedEarly(t *testing.T) {
	b := startBridge(t, nil)
	p := b.dialPage(adaptertest.DialOptions{})
	if err := p.SendText(`{"token":"` + testToken + `","pad":"` + strings.Repeat("a", 8<<20) + `"}`); err != nil {
		t.Logf("send: %v (the bridge may close mid-frame)", err)
	}
	p.expectClosed()
	_, refusals := b.S.refusals.snapshot()
	if len(refusals) == 0 || refusals[0].Reason != ReasonBadFrame || !strings.Contains(refusals[0].Detail, "4 KiB") {
		t.Fatalf("refusals %+v", refusals)
	}
	// The bridge is fine and the token unspent.
	b.attach(map[string]any{"token": testToken})
}

// A page may send its tool list right behind the handshake, without waiting
// for hello: the guard only limits the first message.
func TestPipelinedToolListAfterHandshake(t *testing.T) {
	b := startBridge(t, nil)
	p := b.dialPage(adaptertest.DialOptions{})
	var tl strings.Builder
	tl.WriteString(`{"tools":[`)
	for i := range 200 {
		if i > 0 {
			tl.WriteString(",")
		}
		tl.WriteString(`{"name":"tool` + itoa(i) + `","description":"` + strings.Repeat("d", 200) + `"}`)
	}
	tl.WriteString(`]}`)
	p.send(map[string]any{"token": testToken})
	p.SendText(tl.String())
	if f := p.next(); f["hello"] != ServerName {
		t.Fatalf("answer %v", f)
	}
	deadline := time.Now().Add(frameWait)
	for {
		if tools, _ := b.S.Tools(); len(tools) == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("pipelined tool list lost")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
