package stitchslop

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// wsFrame encodes a masked client frame header + payload.
func wsFrame(op byte, fin bool, payload []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	out := []byte{b0}
	switch n := len(payload); {
	case n < 126:
		out = append(out, 0x80|byte(n))
	case n < 1<<16:
		out = append(out, 0x80|126, 0, 0)
		binary.BigEndian.PutUint16(out[2:], uint16(n))
	default:
		out = append(out, 0x80|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	out = append(out, 1, 2, 3, 4) // mask key; the scan never unmasks
	return append(out, payload...)
}

func TestFrameScan(t *testing.T) {
	small := wsFrame(1, true, []byte(`{"token":"t"}`))
	cases := []struct {
		name   string
		stream []byte
		ok     bool
	}{
		{"small text frame", small, true},
		{"exactly 4 KiB", wsFrame(1, true, make([]byte, MaxFirstFrame)), true},
		{"4 KiB + 1", wsFrame(1, true, make([]byte, MaxFirstFrame+1)), false},
		{"pings first, then a small frame", append(append(wsFrame(9, true, []byte("p")), wsFrame(10, true, nil)...), small...), true},
		{"fragments summing past 4 KiB", append(wsFrame(1, false, make([]byte, 3000)), wsFrame(0, true, make([]byte, 3000))...), false},
		{"fragments within 4 KiB", append(wsFrame(1, false, make([]byte, 2000)), wsFrame(0, true, make([]byte, 2000))...), true},
		{"oversized control frame", wsFrame(9, true, make([]byte, 200)), false},
		{"small frame then a big one (post-auth)", append(small, wsFrame(1, true, make([]byte, 1<<20))...), true},
	}
	huge := []byte{0x81, 0x80 | 127}
	huge = binary.BigEndian.AppendUint64(huge, 1<<40)
	huge = append(huge, 1, 2, 3, 4) // mask key: the header is complete, no payload yet
	cases = append(cases, struct {
		name   string
		stream []byte
		ok     bool
	}{"declared 1 TiB", huge, false})
	for _, tc := range cases {
		for _, chunk := range []int{1, 3, 7, 4096} {
			var f frameScan
			var err error
			for s := tc.stream; len(s) > 0 && err == nil; {
				k := min(chunk, len(s))
				err = f.feed(s[:k])
				s = s[k:]
			}
			if (err == nil) != tc.ok {
				t.Errorf("%s (chunks of %d): err = %v, want ok=%v", tc.name, chunk, err, tc.ok)
			}
		}
	}
}

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
