package adapters

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

type fakeConfig struct{ Base }

func (c *fakeConfig) Validate() error { return nil }

// fakeFactory is a bridge as the registry knows it, with the hooks it is
// given.
func fakeFactory(name string, remote func(RemoteEnv, Status) (ToolBridge, bool), face *FaceSpec) Factory {
	f := FactoryFor(name, func() *fakeConfig { return &fakeConfig{} }, func(*fakeConfig) (Adapter, error) { return nil, ErrNotImplemented },
		func(env CommandEnv) *cli.Command {
			return &cli.Command{Name: name, Action: func(c *cli.Context) error {
				_, ok := env.HubAdapter(c.Context, name)
				if !ok {
					return cli.Exit(name+": no hub", 3)
				}
				return nil
			}}
		})
	f.Remote, f.Face = remote, face
	return f
}

// The registry keeps the order it was given for Factories (hub mcp's
// order), sorts Names and Commands, and hands every command group the
// CommandEnv the binary gives it.
func TestRegistryOrderAndCommands(t *testing.T) {
	r := NewRegistry(fakeFactory("zeta", nil, nil), fakeFactory("alpha", nil, nil), fakeFactory("mid", nil, nil))
	var order []string
	for _, f := range r.Factories() {
		order = append(order, f.Name)
	}
	if got := strings.Join(order, ","); got != "zeta,alpha,mid" {
		t.Fatalf("Factories in %s, want the order given", got)
	}
	if got := strings.Join(r.Names(), ","); got != "alpha,mid,zeta" {
		t.Fatalf("Names = %s, want sorted", got)
	}
	asked := 0
	env := CommandEnv{RunningHub: func(context.Context) ([]Status, error) {
		asked++
		return []Status{{Name: "mid", State: StateRunning, Ports: []int{1}}}, nil
	}}
	cmds := r.Commands(env)
	var names []string
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "alpha,mid,zeta" {
		t.Fatalf("Commands = %s", got)
	}
	app := &cli.App{Name: "hub", Commands: cmds, ExitErrHandler: func(*cli.Context, error) {}}
	if err := app.Run([]string{"hub", "mid"}); err != nil || asked != 1 {
		t.Fatalf("the mid command: %v, the running hub asked %d times", err, asked)
	}
	if err := app.Run([]string{"hub", "alpha"}); err == nil {
		t.Fatal("alpha found running in a hub that does not run it")
	}
}

// Registry.Remote reaches a bridge through its factory's Remote hook, with
// the caller's env and the hub's status line, and only an adapter that
// runs with its ports.
func TestRegistryRemote(t *testing.T) {
	var gotEnv RemoteEnv
	var gotSt Status
	r := NewRegistry(
		fakeFactory("reach", func(env RemoteEnv, st Status) (ToolBridge, bool) {
			gotEnv, gotSt = env, st
			return &fakeBridge{port: st.Ports[0]}, true
		}, nil),
		fakeFactory("nohook", nil, nil),
	)
	env := RemoteEnv{}
	env.Dirs.Home = "/home/u"
	running := Status{Name: "reach", State: StateRunning, Ports: []int{8787}, Dir: "/home/u/.ss"}
	b, ok := r.Remote(env, "reach", running)
	if !ok || b.(*fakeBridge).port != 8787 || gotEnv.Dirs.Home != "/home/u" || gotSt.Dir != "/home/u/.ss" {
		t.Fatalf("Remote = %v %v with env %+v and status %+v", b, ok, gotEnv, gotSt)
	}
	for _, tc := range []struct {
		why, name string
		st        Status
	}{
		{"unknown", "other", running},
		{"no hook", "nohook", Status{Name: "nohook", State: StateRunning, Ports: []int{1}}},
		{"restarting", "reach", Status{Name: "reach", State: StateRestarting, Ports: []int{8787}}},
		{"no port", "reach", Status{Name: "reach", State: StateRunning}},
	} {
		gotSt = Status{}
		if _, ok := r.Remote(env, tc.name, tc.st); ok || gotSt.Name != "" {
			t.Errorf("%s: a bridge (hook called with %+v)", tc.why, gotSt)
		}
	}
}

// A Face without its constructor is a programming error, found when the
// registry is built rather than when hub mcp first serves.
func TestRegistryRefusesAFaceWithoutNew(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "Face without New") {
			t.Fatalf("recovered %v", r)
		}
	}()
	NewRegistry(fakeFactory("halfface", nil, &FaceSpec{Instructions: "x"}))
}

// Factories is a copy: a caller cannot reorder the registry.
func TestFactoriesIsACopy(t *testing.T) {
	r := NewRegistry(fakeFactory("a", nil, nil), fakeFactory("b", nil, nil))
	fs := r.Factories()
	slices.Reverse(fs)
	if r.Factories()[0].Name != "a" {
		t.Fatal("the registry's order changed through Factories' result")
	}
}
