package aiui

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hubdev/hub/aiui/tools"
)

// TestClientWaitsForTheBackendsCallTimeout: a page tool may take up to
// call_timeout_ms to answer, so the control client waits that long (and
// some) for /control/call, beyond its usual request bound: it used to
// give up at 60 s whatever call_timeout_ms said, and report the running
// backend as gone (exit 3) while the call still ran on the page. Here the
// usual bound is cut to 50 ms and the page answers after 300 ms.
func TestClientWaitsForTheBackendsCallTimeout(t *testing.T) {
	h, _ := start(t, func(c *Config, _ *Server) { c.CallTimeoutMS = 5000 })
	toolsPage(t, h, `{"v":1,"type":"register","ns":"slow","hash":"s1","tools":[{"name":"think","description":"slow"}]}`,
		func(call map[string]any) string {
			time.Sleep(300 * time.Millisecond)
			return fmt.Sprintf(`{"v":1,"type":"result","callId":%q,"ok":true,"value":"done"}`, call["callId"])
		})
	cl := control(t, h)
	cl.HTTP.Timeout = 50 * time.Millisecond
	res, err := cl.Call(context.Background(), tools.CallRequest{Name: "think"})
	if err != nil || !res.OK || string(res.Value) != `"done"` {
		t.Fatalf("call = %+v, %v", res, err)
	}
}
