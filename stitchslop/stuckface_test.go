package stitchslop

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// A face that stopped reading its event stream (SIGSTOP, a hung client)
// left the handler blocked in a write the request's cancellation could
// not end, so the bridge's stop waited for the server's forced close.
func TestStopDoesNotWaitForAFaceThatStoppedReading(t *testing.T) {
	b := startBridge(t, nil)
	p, _ := b.attach(map[string]any{"token": testToken})
	r, err := OpenRemote(context.Background(), b.configDir(), b.Port())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	stuck := make(chan struct{})
	got := make(chan struct{}, 1)
	followed := make(chan error, 1)
	go func() {
		followed <- r.Events(context.Background(), "stuck", func(ToolsEvent) {
			select {
			case got <- struct{}{}:
			default:
			}
			<-stuck // read nothing more: the socket's buffers fill up
		})
	}()
	t.Cleanup(func() { close(stuck); <-followed })
	<-got

	big := strings.Repeat("d", 150<<10)
	for i := range 40 { // each event carries the whole list: far past what loopback buffers hold
		tools := make([]map[string]any, 6)
		for j := range tools {
			tools[j] = map[string]any{"name": "t" + itoa(j), "description": itoa(i) + big}
		}
		p.send(map[string]any{"tools": tools})
		time.Sleep(time.Millisecond) // let each change be written, not coalesced
	}

	adaptertest.StopsBeforeForcedClose(t, b.Stop)
}
