package stitchslop

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub/ws"
)

// A big first frame is refused before gws reads (or allocates) it.
func TestHugeFirstFrameRefusedEarly(t *testing.T) {
	b := startBridge(t, nil)
	p := b.dialPage(adaptertest.DialOptions{})
	if err := p.SendText(`{"token":"` + testToken + `","pad":"` + strings.Repeat("a", 8<<20) + `"}`); err != nil {
		t.Logf("send: %v (the bridge may close mid-frame)", err)
	}
	p.expectClosed()
	_, refusals := b.run().refusals.snapshot()
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

// 150 sockets that upgrade the page socket and declare a 32 MiB frame
// without a handshake cost a few MiB, not 32 MiB each.
func TestPreAuthFloodCostsLittle(t *testing.T) {
	b := startBridge(t, nil)
	adaptertest.PreAuthFloodCostsLittle(t, b.WSURL("/"), adaptertest.DialOptions{Origin: testOrigin}, DefaultMaxFrame)
}

// At most ws.DefaultMaxUnauthenticated page sockets may wait for their
// handshake; the next upgrade is refused with 503 (and counted as a
// refusal), and one that authenticates frees its place.
func TestUnauthenticatedPagesCapped(t *testing.T) {
	b := startBridge(t, nil)
	var idle []*page
	for range ws.DefaultMaxUnauthenticated {
		idle = append(idle, b.dialPage(adaptertest.DialOptions{}))
	}
	c, err := b.Dial("/", adaptertest.DialOptions{Origin: testOrigin})
	if err == nil || c.Status() != http.StatusServiceUnavailable {
		t.Fatalf("upgrade over the cap: err %v, status %d", err, c.Status())
	}
	_, refusals := b.run().refusals.snapshot()
	found := false
	for _, r := range refusals {
		found = found || r.Reason == ReasonCrowded
	}
	if !found {
		t.Fatalf("refusals %+v", refusals)
	}
	idle[0].send(map[string]any{"token": testToken})
	if f := idle[0].next(); f["hello"] != ServerName {
		t.Fatalf("answer %v", f)
	}
	adaptertest.WaitFor(t, "a free place", func() bool { return pagesUnauthenticated(b.S) < ws.DefaultMaxUnauthenticated })
	b.dialPage(adaptertest.DialOptions{})
}

func pagesUnauthenticated(s *Server) int {
	return s.cur.Load().pages.Unauthenticated()
}
