package supervisor_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// BenchmarkGeturlPlugin is the path a URL-reading agent runs to drive a
// page through geturl's /k: a GET on the data plane → the plugin host →
// the bridge (in-process ToolBridge) → the page over a real WebSocket →
// back, in a hub run as `hub run` runs it. read is a page read on the read
// base; mutation a page command on the mutation base, each with new
// arguments, so each is journaled (fsynced) and sent once. The agent's
// client, the hub and the page share this process, so
// process-cpu-µs/op is the whole round trip's CPU: end to end, no floor.
func BenchmarkGeturlPlugin(b *testing.B) {
	mutations := map[string]string{
		"stitchslop": `{"kind":"satin","at":[1,%d]}`,
		"pixelle":    `{"expectedRevision":4,"params":{"nodes":[{"id":"concept","kind":"note","title":"Concept","content":"c%d"}]}}`,
		"aiui":       `{"speed":%d}`,
	}
	for _, sc := range []scenario{stitchslopScenario(), pixelleScenario(), aiuiScenario()} {
		b.Run(sc.bridge, func(b *testing.B) {
			h := startE2EHub(b, sc.bridge)
			// A URL reader keeps its connection (the tunnel does).
			tr := &http.Transport{}
			h.http = &http.Client{Transport: tr}
			b.Cleanup(tr.CloseIdleConnections)
			r, m := h.session()
			sc.attach(b, h, r, m)
			adaptertest.WaitFor(b, "the plugin ready", func() bool { st, n := h.plugin(r, sc.bridge); return st == "ready" && n > 0 })
			b.Run("read", func(b *testing.B) {
				u := r + sc.read.query(sc.bridge, "")
				measured := adaptertest.MeasureProcess(b)
				for range b.N {
					if a := h.get(u); !a.OK || !strings.Contains(string(a.Result), sc.readWant) {
						b.Fatalf("read: %s", a.raw)
					}
				}
				measured()
			})
			b.Run("mutation", func(b *testing.B) {
				c := call{sc.mutation.tool, ""}
				urls := make([]string, b.N)
				for i := range urls {
					c.args = fmt.Sprintf(mutations[sc.bridge], b.N*1000+i) // new each run
					urls[i] = m + c.query(sc.bridge, mutateWait)
				}
				measured := adaptertest.MeasureProcess(b)
				for _, u := range urls {
					if a := h.get(u); !a.OK || a.State != "succeeded" || a.Replayed {
						b.Fatalf("mutation: %s", a.raw)
					}
				}
				measured()
			})
		})
	}
}
