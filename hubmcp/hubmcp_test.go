package hubmcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/aiui"
	"github.com/hubdev/hub/supervisor"
)

// One server for the whole hub: every running bridge's tools, namespaced
// to portable names, calls routed to their pages, list_changed as pages
// come and go, and every tool withdrawn when the hub stops.
func TestServesTheHubsBridges(t *testing.T) {
	dirs := adaptertest.TempDirs(t)
	h := startHub(t, dirs, hubConfig(t, "stitchslop", "aiui", "pixelle"))
	page := h.ssPage("scene.describe", "render")
	s := runFace(t, Options{Dirs: dirs})

	const want = "hub_status," + stitchOwnTools + ",stitchslop_scene_describe,stitchslop_render," +
		"pixelle_state,pixelle_selection,pixelle_call,pixelle_pair,pixelle_wait,channel_info,page_tools_call,page_tools_list"
	eventually(t, "every bridge's tools", func() bool { return s.tools() == want })
	_, desc, _ := s.Tools(wait)
	if !strings.Contains(desc["stitchslop_scene_describe"], `(page tool "scene.describe")`) {
		t.Fatalf("a renamed tool does not say its page name: %q", desc["stitchslop_scene_describe"])
	}

	cases := []struct {
		name, tool string
		args       map[string]any
		isError    bool
		want       string
	}{
		{"a stitchslop call reaches its tab", "stitchslop_scene_describe", map[string]any{"limit": 2}, false, "Two objects on the hoop.\n"},
		{"its arguments too", "stitchslop_scene_describe", map[string]any{"limit": 2}, false, `"args":{"limit":2}`},
		{"the wait tool", "stitchslop_wait_for_connection", map[string]any{"timeoutSeconds": 1}, false, "Already connected"},
		{"pixelle without a pairing", "pixelle_state", nil, true, "hub pixelle pair"},
		{"aiui", "channel_info", nil, false, `"generation"`},
		{"no aiui page yet", "page_tools_call", map[string]any{"name": "zoom"}, true, "no page is connected"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := s.tool(tc.tool, tc.args)
			if res.IsError != tc.isError || !strings.Contains(res.Text, tc.want) {
				t.Fatalf("%s = %q (isError %v), want %q", tc.tool, res.Text, res.IsError, tc.want)
			}
		})
	}
	// Images come back as image blocks, as from the bridge's own face.
	if res := s.tool("stitchslop_render", nil); len(res.Content) != 2 || res.Content[1]["type"] != "image" || res.Content[1]["data"] != "UE5HREFUQQo=" {
		t.Fatalf("render = %+v", res)
	}
	status := s.tool("hub_status", nil).Text
	for _, want := range []string{`"running": true`, `"startedByThisServer": false`, `"stitchslop_scene_describe"`, `"pageAttached": true`} {
		if !strings.Contains(status, want) {
			t.Errorf("hub_status lacks %s:\n%s", want, status)
		}
	}
	adaptertest.WaitFor(t, "the hub to count the face", func() bool {
		for _, a := range h.sup.Status() {
			if a.Name == "stitchslop" {
				return a.AgentSessions == 1
			}
		}
		return false
	})

	// The page detaches: list_changed, and its tools are gone.
	s.DropNotes()
	page.Close()
	s.note("notifications/tools/list_changed")
	eventually(t, "the page's tools to go", func() bool { return !strings.Contains(s.tools(), "stitchslop_scene") })

	// The hub stops: every bridge's tools go, and hub_status says why.
	s.DropNotes()
	h.stop()
	s.note("notifications/tools/list_changed")
	eventually(t, "only hub_status", func() bool { return s.tools() == "hub_status" })
	if st := s.tool("hub_status", nil).Text; !strings.Contains(st, "stopped") {
		t.Fatalf("hub_status after the hub stopped:\n%s", st)
	}
	if res := s.tool("stitchslop_render", nil); !res.IsError {
		t.Fatalf("a withdrawn tool still answers: %+v", res)
	}
}

// A bridge that is disabled, or waits for the user, contributes no tools,
// and hub_status says why.
func TestBridgesThatDoNotRun(t *testing.T) {
	dirs := adaptertest.TempDirs(t)
	startHub(t, dirs, hubConfig(t, "stitchslop"))
	s := runFace(t, Options{Dirs: dirs})
	eventually(t, "the stitchslop tools", func() bool { return s.tools() == "hub_status,"+stitchOwnTools })
	// The wait tool's advice names it as this server offers it.
	if txt := s.tool("stitchslop_wait_for_connection", map[string]any{"timeoutSeconds": 0}).Text; !strings.Contains(txt, "call stitchslop_wait_for_connection again") {
		t.Errorf("the wait tool names another tool:\n%s", txt)
	}
	status := s.tool("hub_status", nil).Text
	for _, want := range []string{"adapters.aiui is disabled", "adapters.pixelle is disabled: set adapters.pixelle.website", "needs a token"} {
		if !strings.Contains(status, want) {
			t.Errorf("hub_status lacks %q:\n%s", want, status)
		}
	}
}

// With no hub running, hub mcp starts one (once) and says so; with one
// running it starts none. Either way it never stops the hub.
func TestStartsAHubOnlyWhenNoneRuns(t *testing.T) {
	cases := []struct {
		name    string
		running bool
		starts  int32
		started string
	}{
		{"none running", false, 1, `"startedByThisServer": true`},
		{"one running", true, 0, `"startedByThisServer": false`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dirs := adaptertest.TempDirs(t)
			cfg := hubConfig(t, "stitchslop")
			if tc.running {
				startHub(t, dirs, cfg)
			}
			var starts atomic.Int32
			s := runFace(t, Options{Dirs: dirs, StartHub: func(context.Context) error {
				starts.Add(1)
				startHub(t, dirs, cfg)
				return nil
			}})
			eventually(t, "the hub's tools", func() bool { return s.tools() == "hub_status,"+stitchOwnTools })
			if n := starts.Load(); n != tc.starts {
				t.Fatalf("started %d hubs, want %d", n, tc.starts)
			}
			if st := s.tool("hub_status", nil).Text; !strings.Contains(st, tc.started) {
				t.Fatalf("hub_status:\n%s", st)
			}
			s.Close()
			<-s.done
			if _, live, msg := supervisor.Probe(dirs.State); live != supervisor.Running {
				t.Fatalf("the hub is gone after hub mcp exited: %s", msg)
			}
		})
	}
}

// The instructions the client gets at initialize say what an aiui
// prompt's provenance meta means, as `hub aiui mcp`'s do: the agent must
// tell a page's prompt and a keyed one from one any local user can send.
func TestInstructionsExplainPromptProvenance(t *testing.T) {
	s := runFace(t, Options{Dirs: adaptertest.TempDirs(t)})
	ins, _ := s.init["instructions"].(string)
	var lack []string
	for _, want := range []string{
		aiui.MetaSender + "=" + aiui.SenderPage, aiui.MetaSenderOrigin,
		aiui.MetaSender + "=" + aiui.SenderKeyed,
		aiui.MetaSender + "=" + aiui.SenderLocal + " (unverified",
		aiui.MetaProvenance, "the sender's word",
	} {
		if !strings.Contains(ins, want) {
			lack = append(lack, want)
		}
	}
	if lack != nil {
		t.Fatalf("instructions lack %q:\n%s", lack, ins)
	}
}

// A hub whose stitchslop adapter keeps its session files outside the
// default config dir is followed all the same: the dir comes from the
// adapter's status line, not from parsing the hub's config.
func TestFollowsStitchslopInItsConfiguredDir(t *testing.T) {
	dirs := adaptertest.TempDirs(t)
	cfg := filepath.Join(t.TempDir(), "hub.yaml")
	yaml := "lifecycle:\n  no_page_minutes: 0\n  agent_idle_minutes: 0\nadapters:\n" +
		"  stitchslop:\n    origin: " + testOrigin + "\n    ports: [0]\n    config_dir: ~/elsewhere\n" +
		"  aiui:\n    enabled: false\n  pixelle:\n    enabled: false\n  geturl:\n    enabled: false\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	startHub(t, dirs, cfg)
	s := runFace(t, Options{Dirs: dirs})
	eventually(t, "the stitchslop tools", func() bool { return s.tools() == "hub_status,"+stitchOwnTools })
	var rep statusReport
	if err := json.Unmarshal([]byte(s.tool("hub_status", nil).Text), &rep); err != nil {
		t.Fatal(err)
	}
	for _, b := range rep.Bridges {
		if b.Name == "stitchslop" && b.Why != "" {
			t.Fatalf("stitchslop offers no tools: %s", b.Why)
		}
	}
}
