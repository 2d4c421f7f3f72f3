package stitchslop

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
)

// A bridge that takes a call and goes away before answering (killed, or
// crashed) leaves the call's fate unknown: the tab may have run it. The
// face must say so, as the bridge itself does when the tab leaves, and
// not "The call was not sent" (an agent would retry a command that ran).
func TestLostAnswerIsUncertainNotUnsent(t *testing.T) {
	got := make(chan struct{}, 1)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- struct{}{}
		conn, _, err := w.(http.Hijacker).Hijack() // the bridge dies mid-call
		if err == nil {
			conn.Close()
		}
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	r := newRemote("", sessionFile{Port: port, Key: "k", Origin: testOriginForLost})
	t.Cleanup(r.Close)
	f := &face{b: newRemoteFace(r, nil)}

	res := f.pageCall(context.Background(), "stitch.add", []byte(`{}`))
	<-got
	text, _ := res.Content[0]["text"].(string)
	if !res.IsError || strings.Contains(text, "not sent") || !strings.Contains(text, `"uncertain"`) || !strings.Contains(text, "may or may not have run") {
		t.Fatalf("lost answer rendered as %v: %s", res.IsError, text)
	}

	// A bridge that is not there at all never got the call: that stays "not sent".
	srv.Close()
	gone := newRemote("", sessionFile{Port: port, Key: "k", Origin: testOriginForLost})
	t.Cleanup(gone.Close)
	f = &face{b: newRemoteFace(gone, nil)}
	res = f.pageCall(context.Background(), "stitch.add", []byte(`{}`))
	if text, _ := res.Content[0]["text"].(string); !res.IsError || !strings.Contains(text, "not sent") {
		t.Fatalf("refused dial rendered as: %s", text)
	}
}

const testOriginForLost = "https://www.stitchslop.test"
