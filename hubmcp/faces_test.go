package hubmcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/mcpserver"
	"github.com/hubdev/hub/supervisor"
)

// fakeAdapter is a bridge of a name hub mcp cannot know: it binds a port
// and reports a directory.
type fakeAdapter struct{ dir string }

func (a *fakeAdapter) Serve(ctx context.Context, env *adapters.Env) error {
	ln, port, err := hub.Listen([]int{0})
	if err != nil {
		return err
	}
	defer ln.Close()
	env.Ready(port)
	<-ctx.Done()
	return nil
}

func (a *fakeAdapter) Status() adapters.Status { return adapters.Status{Dir: a.dir} }

type fakeConfig struct {
	adapters.Base `yaml:",inline"`
}

func (c *fakeConfig) Validate() error { return nil }

// fakeFace records how hub mcp drives it. Its tools are <name>_echo and
// <name>_where (the adapter as FaceEnv.Adapter finds it, per call).
type fakeFace struct {
	name     string
	env      adapters.FaceEnv
	fw       *mcpserver.Forwarder
	failures int // Follow fails this many times before it attaches
	ran      atomic.Bool

	mu      sync.Mutex
	follows []adapters.Status
	absent  []string
}

func (f *fakeFace) Run(ctx context.Context) {
	f.ran.Store(true)
	<-ctx.Done()
}

func (f *fakeFace) Follow(ctx context.Context, st adapters.Status, attached func()) error {
	f.mu.Lock()
	f.follows = append(f.follows, st)
	fail := len(f.follows) <= f.failures
	f.mu.Unlock()
	if fail {
		return errors.New("the " + f.name + " bridge does not answer yet")
	}
	obj := json.RawMessage(`{"type":"object"}`)
	f.fw.Sync(ctx, []*mcp.Tool{{Name: f.name + "_echo", InputSchema: obj}, {Name: f.name + "_where", InputSchema: obj}})
	attached()
	<-ctx.Done()
	return nil
}

func (f *fakeFace) Absent(why string) {
	f.mu.Lock()
	f.absent = append(f.absent, why)
	f.mu.Unlock()
	f.fw.Clear(context.Background())
}

func (f *fakeFace) Tools() []string {
	var out []string
	for n := range f.fw.Names() {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func (f *fakeFace) Unknown(tool string) (string, bool) {
	return "Ask the " + f.name + " bridge.", strings.HasPrefix(tool, f.name+"_")
}

func (f *fakeFace) call(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	if name != f.name+"_where" {
		return mcpserver.TextResult(string(args)), nil
	}
	st, err := f.env.Adapter(ctx)
	if err != nil {
		return mcpserver.ErrorResult(err.Error()), nil
	}
	return mcpserver.TextResult(fmt.Sprintf("%s on port %d in %s", st.Name, st.Ports[0], st.Dir)), nil
}

func (f *fakeFace) state() (follows []adapters.Status, absent []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.follows), slices.Clone(f.absent)
}

// fakeFaces builds fake bridges and keeps their faces by name.
type fakeFaces struct {
	mu    sync.Mutex
	faces map[string]*fakeFace
}

func (ff *fakeFaces) face(name string) *fakeFace {
	ff.mu.Lock()
	defer ff.mu.Unlock()
	return ff.faces[name]
}

// factory is a bridge with a face (failures: how often its Follow fails
// before it attaches), or without one.
func (ff *fakeFaces) factory(name string, withFace bool, failures int) adapters.Factory {
	f := adapters.FactoryFor(name, func() *fakeConfig { return &fakeConfig{} }, func(*fakeConfig) (adapters.Adapter, error) {
		return &fakeAdapter{dir: "/fake/" + name}, nil
	}, nil)
	if !withFace {
		return f
	}
	f.Face = &adapters.FaceSpec{
		Instructions: "The " + name + " bridge's tools are " + name + "_echo and " + name + "_where.",
		Experimental: map[string]any{name + "/cap": map[string]any{}},
		New: func(env adapters.FaceEnv) adapters.Face {
			face := &fakeFace{name: name, env: env, failures: failures}
			face.fw = env.Server.Forward(mcpserver.Identity, face.call)
			ff.mu.Lock()
			ff.faces[name] = face
			ff.mu.Unlock()
			return face
		},
	}
	return f
}

// hub mcp is a loop over the registry: bridges whose names it cannot know
// are served through their faces alone, in the registry's order, with
// their instructions and capabilities; it follows each adapter, says why
// one offers no tools, answers a call of a tool not offered with the
// face's word, and withdraws every tool when the hub stops.
func TestFacesComeFromTheRegistry(t *testing.T) {
	dirs := adaptertest.TempDirs(t)
	ff := &fakeFaces{faces: map[string]*fakeFace{}}
	reg := adapters.NewRegistry(
		ff.factory("zfake", true, 0),
		ff.factory("flaky", true, 2),
		ff.factory("off", true, 0),
		ff.factory("plain", false, 0),
	)
	cfg := filepath.Join(t.TempDir(), "hub.yaml")
	yaml := "lifecycle:\n  no_page_minutes: 0\n  agent_idle_minutes: 0\nadapters:\n" +
		"  zfake:\n    enabled: true\n  flaky:\n    enabled: true\n  off:\n    enabled: false\n  plain:\n    enabled: true\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	lock, err := supervisor.AcquireLock(dirs.State)
	if err != nil {
		t.Fatal(err)
	}
	h := startHubOf(t, dirs, cfg, lock, reg)
	s := runFace(t, Options{Dirs: dirs, Registry: reg, CWD: "/work/project"})

	ins, _ := s.init["instructions"].(string)
	wantIns := instructionsHead + " The zfake bridge's tools are zfake_echo and zfake_where. The flaky bridge's tools are flaky_echo and flaky_where. " +
		"The off bridge's tools are off_echo and off_where. " + instructionsTail
	if ins != wantIns {
		t.Errorf("instructions:\n%s\nwant\n%s", ins, wantIns)
	}
	caps, _ := s.init["capabilities"].(map[string]any)
	exp, _ := caps["experimental"].(map[string]any)
	for _, c := range []string{"zfake/cap", "flaky/cap", "off/cap"} {
		if _, ok := exp[c]; !ok {
			t.Errorf("capabilities.experimental lacks %s: %v", c, caps)
		}
	}

	// In the registry's order, not the names'.
	const want = "hub_status,zfake_echo,zfake_where,flaky_echo,flaky_where"
	eventually(t, "the faces' tools", func() bool { return s.tools() == want })
	if res := s.tool("zfake_echo", map[string]any{"x": 1}); res.IsError || res.Text != `{"x":1}` {
		t.Errorf("zfake_echo = %+v", res)
	}
	if res, want := s.tool("zfake_where", nil), fmt.Sprintf("zfake on port %d in /fake/zfake", h.port("zfake")); res.Text != want {
		t.Errorf("zfake_where = %q, want %q", res.Text, want)
	}

	zfake, flaky, off := ff.face("zfake"), ff.face("flaky"), ff.face("off")
	if env := zfake.env; !strings.HasPrefix(env.FaceID, "hub-mcp-") || env.CWD != "/work/project" || env.Dirs != dirs || env.Log == nil {
		t.Errorf("FaceEnv = %+v", env)
	}
	for _, f := range []*fakeFace{zfake, flaky, off} {
		eventually(t, f.name+"'s Run", f.ran.Load)
	}
	follows, absent := zfake.state()
	if len(follows) != 1 || follows[0].Name != "zfake" || follows[0].Ports[0] != h.port("zfake") || follows[0].Dir != "/fake/zfake" {
		t.Errorf("zfake followed %+v", follows)
	}
	// Followed once there was a hub; absent once before, while none ran
	// (the first look), and never since.
	if len(absent) > 1 {
		t.Errorf("zfake absent %q", absent)
	}
	// A face that cannot reach its adapter is looked at again; the same
	// reason twice withdraws its tools once.
	follows, absent = flaky.state()
	if len(follows) != 3 || len(absent) == 0 || slices.Index(absent, "the flaky bridge does not answer yet") != len(absent)-1 {
		t.Errorf("flaky: followed %d times, absent %q", len(follows), absent)
	}
	follows, absent = off.state()
	if len(follows) != 0 || last(absent) != "adapters.off is disabled in the hub's config" {
		t.Errorf("off: followed %+v, absent %q", follows, absent)
	}

	var rep statusReport
	if err := json.Unmarshal([]byte(s.tool("hub_status", nil).Text), &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string]bridgeReport{}
	for _, b := range rep.Bridges {
		got[b.Name] = b
	}
	if b := got["zfake"]; strings.Join(b.Tools, ",") != "zfake_echo,zfake_where" || b.Why != "" || b.State != adapters.StateRunning {
		t.Errorf("hub_status's zfake: %+v", b)
	}
	if b := got["off"]; len(b.Tools) != 0 || b.Why != "adapters.off is disabled in the hub's config" {
		t.Errorf("hub_status's off: %+v", b)
	}
	if b := got["plain"]; b.Why != "hub mcp does not serve this bridge's tools" {
		t.Errorf("hub_status's plain: %+v", b)
	}

	for _, tc := range []struct{ tool, want string }{
		{"zfake_nope", `No tool named "zfake_nope" is offered now. Ask the zfake bridge. hub_status lists`},
		{"off_echo", `No tool named "off_echo" is offered now. The off bridge offers no tools: adapters.off is disabled in the hub's config. hub_status lists`},
		{"nobody_echo", `No tool named "nobody_echo" is offered now. hub_status lists`},
	} {
		if res := s.tool(tc.tool, nil); !res.IsError || !strings.HasPrefix(res.Text, tc.want) {
			t.Errorf("%s = %q (isError %v), want %q…", tc.tool, res.Text, res.IsError, tc.want)
		}
	}

	// The hub stops: every face is told why, and its tools go. (Between
	// its state file going and its lock, a look may find "a hub is
	// starting" first.)
	h.stop()
	eventually(t, "only hub_status", func() bool { return s.tools() == "hub_status" })
	stopped := fmt.Sprintf("the hub (pid %d) stopped", os.Getpid())
	eventually(t, "every face told the hub stopped", func() bool {
		for _, f := range []*fakeFace{zfake, flaky} {
			if _, absent := f.state(); !strings.HasPrefix(last(absent), stopped) {
				return false
			}
		}
		return true
	})
	if res := s.tool("zfake_echo", nil); !res.IsError || !strings.Contains(res.Text, "The zfake bridge offers no tools: "+stopped) {
		t.Errorf("zfake_echo after the hub stopped = %q", res.Text)
	}
}

// last is the last of xs, "" for none.
func last(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return xs[len(xs)-1]
}
