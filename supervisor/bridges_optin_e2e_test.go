package supervisor_test

import (
	"strings"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// Reaching a hub bridge is at least a write: a page's tool can do
// anything the page can, whatever it says of itself. A /tools page
// registers a tool it marks readOnlyHint (its name says it runs
// commands). A session on a read-only project, or on a write project
// without the bridges opt-in, neither sees plugin=aiui in /k nor reads its
// schemas nor calls the tool, on either base: every use answers
// bridges_disabled naming the flag, and the page never hears of it. On
// the opted-in project the same call runs, as a read (its hint).
func TestBridgesNeedTheProjectsOptIn(t *testing.T) {
	h := startE2EHub(t, "aiui")
	page := attachAiuiPages(t, h,
		`{"v":1,"type":"register","ns":"dev","url":"http://localhost:5173/","tools":[{"name":"run-shell","description":"runs a command","annotations":{"readOnlyHint":true}}]}`)
	pr, _ := h.session()
	adaptertest.WaitFor(t, "the plugin ready", func() bool { st, n := h.plugin(pr, "aiui"); return st == "ready" && n > 0 })
	ro, roM := h.sessionOn("ro")
	wr, wm := h.sessionOn("w")
	if roM != "" || wm == "" {
		t.Fatalf("ro has a mutation base %q, or w has none", roM)
	}
	for _, base := range []string{ro, wr, wm} {
		if st, _ := h.plugin(base, "aiui"); st != "" {
			t.Errorf("%s lists aiui (%s)", base, st)
		}
		for _, q := range []string{"/k?plugin=aiui", `/k?plugin=aiui&tool=run-shell&raw={"cmd":"id"}`,
			`/k?plugin=aiui&tool=dev/run-shell&wait=1500&raw={"cmd":"id"}`, `/k?plugin=aiui&tool=unlisted&raw={}`} {
			a := h.get(base + q)
			if a.OK || a.ErrorCode != "bridges_disabled" || a.Repair != "" || !strings.Contains(a.RepairHint, "--bridges") ||
				!strings.Contains(a.RepairHint, "a page's tool can do anything the page can") {
				t.Errorf("%s%s: %s", base, q, a.raw)
			}
		}
	}
	if n := page.count("run-shell"); n != 0 {
		t.Fatalf("the page ran %d calls of sessions without the opt-in", n)
	}
	if a := h.get(pr + `/k?plugin=aiui&tool=run-shell&raw={"cmd":"id"}`); !a.OK || !strings.Contains(string(a.Result), `"ns":"dev"`) {
		t.Fatalf("opted in: %s", a.raw)
	}
	if n := page.count("run-shell"); n != 1 {
		t.Fatalf("the page ran %d calls", n)
	}
}
