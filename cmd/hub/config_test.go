package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/configs"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/pixelle"
	"github.com/hubdev/hub/registry"
	"github.com/hubdev/hub/stitchslop"
	"github.com/hubdev/hub/supervisor"
)

// realRegistry is the binary's registry, so config tests see every real key.
func realRegistry() *adapters.Registry { return registry.New() }

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"unknown top-level key", "log:\n  level: info\nlogging: {}\n", `hub.yaml:3: unknown key "logging"`},
		{"unknown lifecycle key", "lifecycle:\n  no_page_minute: 1\n", `hub.yaml:2: unknown key "lifecycle.no_page_minute"`},
		{"unknown log key", "log:\n  level: info\n  file: /tmp/x\n", `hub.yaml:3: unknown key "log.file"`},
		{"unknown nested adapter key", "adapters:\n  geturl:\n    opencode:\n      bogus: 1\n", `hub.yaml:4: unknown key "adapters.geturl.opencode.bogus"`},
		{"unknown adapter key", "adapters:\n  pixelle:\n    port: 4317\n    websit: https://a.example\n", `hub.yaml:4: unknown key "adapters.pixelle.websit"`},
		{"duplicate key", "adapters:\n  aiui:\n    port: 1\n    port: 2\n", "hub.yaml:4: adapters.aiui.port: duplicate key (first defined at line 3)"},
		// A key whose value is a mapping is named too, not only a leaf.
		{"duplicate section", "adapters:\n  aiui:\n    port: 1\n  aiui:\n    port: 2\n", "hub.yaml:4: adapters.aiui: duplicate key (first defined at line 2)"},
		{"duplicate top-level section", "log:\n  level: info\nlog:\n  level: debug\n", "hub.yaml:3: log: duplicate key (first defined at line 1)"},
		{"wrong type", "adapters:\n  aiui:\n    port: lots\n", "hub.yaml:3: adapters.aiui.port: wrong type: want a whole number, got a string `lots`"},
		{"fraction for minutes", "lifecycle:\n  no_page_minutes: 0.1\n", "hub.yaml:2: lifecycle.no_page_minutes: wrong type: want a whole number, got a number `0.1`"},
		{"scalar for a section", "adapters:\n  aiui: 5\n", "hub.yaml:2: adapters.aiui: wrong type: want a mapping of keys, got a number `5`"},
		{"list for a bool", "log:\n  level: info\nadapters:\n  pixelle:\n    enabled: [yes]\n", "hub.yaml:5: adapters.pixelle.enabled: wrong type: want true or false, got a list"},
		{"unknown adapter", "adapters:\n  telnet:\n    enabled: true\n", "hub.yaml:3: adapters.telnet: unknown adapter (known: aiui, geturl, pixelle, stitchslop)"},
		{"port out of range", "adapters:\n  aiui:\n    port: 70000\n", "hub.yaml:3: adapters.aiui.port: must be a port in 1..65535 (or 0 for any free port), got 70000"},
		{"negative port in list", "adapters:\n  stitchslop:\n    ports: [8787, -1]\n", "hub.yaml:3: adapters.stitchslop.ports: must be a port in 1..65535"},
		{"non-loopback address", "adapters:\n  aiui:\n    address: 0.0.0.0\n", `hub.yaml:3: adapters.aiui.address: must be 127.0.0.1 (hub listens on loopback only), got "0.0.0.0"`},
		{"website not an origin", "adapters:\n  pixelle:\n    website: example.com\n", `hub.yaml:3: adapters.pixelle.website: must be an origin like https://example.com, got "example.com"`},
		{"origin with a path", "adapters:\n  stitchslop:\n    origin: https://a.example/app\n", `adapters.stitchslop.origin: must be an origin like https://example.com, got "https://a.example/app"`},
		{"bad log level", "log:\n  level: loud\n", `hub.yaml:2: log.level: must be one of debug, info, warn, error, got "loud"`},
		{"bad log format", "log:\n  level: info\n  format: xml\n", `hub.yaml:3: log.format: must be text or json, got "xml"`},
		{"no shutdown time", "lifecycle:\n  no_page_minutes: 1\n  shutdown_seconds: 0\n", "hub.yaml:3: lifecycle.shutdown_seconds: must be at least 1"},
		{"negative idle", "lifecycle:\n  agent_idle_minutes: -5\n", "hub.yaml:2: lifecycle.agent_idle_minutes: must be 0 (disabled) or more, got -5"},
		// 2592304342608737 minutes in nanoseconds wraps to about 3 s.
		{"idle minutes that overflow", "lifecycle:\n  no_page_minutes: 2592304342608737\n", "lifecycle.no_page_minutes: must be at most 153722867 minutes, got 2592304342608737"},
		{"shutdown seconds that overflow", "lifecycle:\n  shutdown_seconds: 99999999999\n", "lifecycle.shutdown_seconds: must be at most 9223372036 seconds, got 99999999999"},
		{"unknown runtime key", "runtime:\n  maxprocs: 2\n", `hub.yaml:2: unknown key "runtime.maxprocs"`},
		{"max procs too many", "runtime:\n  max_procs: 1025\n", "hub.yaml:2: runtime.max_procs: must be 0 (the default) to 1024, got 1025"},
		{"negative max procs", "log:\n  level: info\nruntime:\n  max_procs: -1\n", "hub.yaml:4: runtime.max_procs: must be 0 (the default) to 1024, got -1"},
		{"fraction for max procs", "runtime:\n  max_procs: 1.5\n", "hub.yaml:2: runtime.max_procs: wrong type: want a whole number, got a number `1.5`"},
		{"malformed yaml", "adapters: [\n", "hub.yaml"},
		{"not a mapping", "- a\n- b\n", "hub.yaml:1: wrong type: want a mapping of keys, got a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := supervisor.ParseConfig([]byte(tt.yaml), "hub.yaml", realRegistry())
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error:\n%v\nwant it to contain:\n%s", err, tt.want)
			}
			if strings.Contains(err.Error(), "goroutine") || strings.Contains(err.Error(), "struct {") ||
				strings.Contains(err.Error(), "supervisor.") || strings.Contains(err.Error(), "[]") {
				t.Fatalf("error leaks internals: %v", err)
			}
		})
	}
}

// A config with every line commented out is an empty one, as an empty
// file is: it was refused with "yaml: no documents in stream".
func TestConfigOnlyComments(t *testing.T) {
	for _, doc := range []string{"", "\n", "# log:\n#   level: debug\n", "---\n", "# nothing here\n---\n# nor here\n"} {
		cfg, err := supervisor.ParseConfig([]byte(doc), "hub.yaml", realRegistry())
		if err != nil {
			t.Errorf("%q: %v", doc, err)
			continue
		}
		if cfg.Lifecycle.NoPageMinutes != 30 {
			t.Errorf("%q: defaults not applied: %+v", doc, cfg.Lifecycle)
		}
	}
}

func TestConfigOverlaysDefaults(t *testing.T) {
	cfg, err := supervisor.ParseConfig([]byte("adapters:\n  pixelle:\n    website: https://pixelle.example\n  aiui:\n    enabled: false\n"), "f", realRegistry())
	if err != nil {
		t.Fatal(err)
	}
	px, _ := cfg.Section("pixelle")
	pc := px.Config.(*pixelle.Config)
	if pc.Website != "https://pixelle.example" || pc.Port != pixelle.DefaultPort || pc.NeedsUser() != "" {
		t.Fatalf("pixelle = %+v", pc)
	}
	ai, _ := cfg.Section("aiui")
	if ai.Config.Common().Enabled {
		t.Fatal("aiui still enabled")
	}
	st, _ := cfg.Section("stitchslop")
	if got := st.Config.(*stitchslop.Config).Ports; !reflect.DeepEqual(got, stitchslop.DefaultPorts) {
		t.Fatalf("untouched section lost its defaults: %v", got)
	}
	if cfg.Lifecycle.NoPageMinutes != 30 || cfg.Lifecycle.AgentIdleMinutes != 120 {
		t.Fatalf("lifecycle defaults: %+v", cfg.Lifecycle)
	}
}

// The embedded default and the documented example must both load and
// describe exactly the built-in defaults.
func TestShippedConfigsMatchDefaults(t *testing.T) {
	builtin, err := supervisor.ParseConfig(nil, "builtin", realRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"default.yaml": configs.Default, "example.yaml": configs.Example} {
		cfg, err := supervisor.ParseConfig(data, name, realRegistry())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(cfg.Log, builtin.Log) || !reflect.DeepEqual(cfg.Lifecycle, builtin.Lifecycle) || cfg.Runtime != builtin.Runtime {
			t.Errorf("%s: log/lifecycle/runtime differ from the built-in defaults", name)
		}
		for i, s := range cfg.Adapters {
			got, _ := yaml.Marshal(s.Config)
			want, _ := yaml.Marshal(builtin.Adapters[i].Config)
			if string(got) != string(want) {
				t.Errorf("%s: adapters.%s = %+v, built-in default %+v", name, s.Name, s.Config, builtin.Adapters[i].Config)
			}
		}
	}
}

// runtime.max_procs takes 0 (the default) to 1024, both ends included.
func TestConfigMaxProcs(t *testing.T) {
	for doc, want := range map[string]int{
		"":                              0,
		"runtime: {}\n":                 0,
		"runtime:\n  max_procs: 0\n":    0,
		"runtime:\n  max_procs: 1\n":    1,
		"runtime:\n  max_procs: 1024\n": 1024,
	} {
		cfg, err := supervisor.ParseConfig([]byte(doc), "hub.yaml", realRegistry())
		if err != nil {
			t.Errorf("%q: %v", doc, err)
			continue
		}
		if cfg.Runtime.MaxProcs != want {
			t.Errorf("%q: max_procs %d, want %d", doc, cfg.Runtime.MaxProcs, want)
		}
	}
}

func TestConfigPath(t *testing.T) {
	dir := t.TempDir()
	dirs := hub.Dirs{Config: filepath.Join(dir, "hub")}
	if p, err := supervisor.ConfigPath("", dirs); err != nil || p != "" {
		t.Fatalf("no file: %q, %v; want the embedded default", p, err)
	}
	if _, err := supervisor.ConfigPath(filepath.Join(dir, "missing.yaml"), dirs); err == nil || !strings.Contains(err.Error(), "missing.yaml: no such file or directory") {
		t.Fatalf("missing --config: %v", err)
	}
	os.MkdirAll(dirs.Config, 0o700)
	os.WriteFile(filepath.Join(dirs.Config, "hub.yaml"), []byte("log: {level: debug}\n"), 0o600)
	p, err := supervisor.ConfigPath("", dirs)
	if err != nil || p != filepath.Join(dirs.Config, "hub.yaml") {
		t.Fatalf("XDG file: %q, %v", p, err)
	}
	cfg, err := supervisor.LoadConfig(p, realRegistry())
	if err != nil || cfg.Log.Level != "debug" || cfg.Source != p {
		t.Fatalf("LoadConfig = %+v, %v", cfg, err)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add(configs.Default)
	f.Add(configs.Example)
	f.Add([]byte("adapters:\n  pixelle:\n    website: example.com\n"))
	f.Add([]byte("adapters: {a: 1, a: 2}\n"))
	f.Add([]byte("&a [*a]"))
	f.Add([]byte("lifecycle: {no_page_minutes: 99999999999999999999}"))
	f.Add([]byte("runtime: {max_procs: 1025}"))
	reg := realRegistry()
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := supervisor.ParseConfig(data, "fuzz.yaml", reg)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		// Anything accepted is fully valid.
		for _, s := range cfg.Adapters {
			if err := s.Config.Validate(); err != nil {
				t.Fatalf("accepted an invalid section %s: %v", s.Name, err)
			}
		}
		if cfg.Lifecycle.ShutdownSeconds < 1 {
			t.Fatal("accepted shutdown_seconds < 1")
		}
		if mp := cfg.Runtime.MaxProcs; mp < 0 || mp > supervisor.MaxMaxProcs {
			t.Fatalf("accepted runtime.max_procs %d", mp)
		}
		// Every accepted rule means what it says (no wrapped durations).
		lc, rules := cfg.Lifecycle, cfg.Lifecycle.IdleRules()
		if rules.NoPageWithin/time.Minute != time.Duration(lc.NoPageMinutes) || rules.AgentIdle/time.Minute != time.Duration(lc.AgentIdleMinutes) ||
			lc.ShutdownTimeout()/time.Second != time.Duration(lc.ShutdownSeconds) {
			t.Fatalf("accepted lifecycle values that overflow: %+v", lc)
		}
	})
}

func TestRedact(t *testing.T) {
	doc := "a:\n  api_key: sk-123\n  api_key_env: OPENAI_API_KEY\n  token: tok_x\n  empty_secret: \"\"\n" +
		"  base_url: https://user:hunter2@example.com/v1\n  list: [{client_secret: s3}]\n  port: 1\n" +
		"  other_url: https://example.com/v1?api_key=qs-secret&model=m\n" +
		// Credential names common in query strings but not as config keys.
		"  google_url: https://example.com/v1?key=qs-key&alt=json\n" +
		"  azure_url: https://example.com/v1?api-key=qs-dash&api-version=2024\n" +
		"  signed_url: https://example.com/o?X-Amz-Signature=qs-sig&sig=qs-sig2\n"
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	redact(&n)
	out, _ := yaml.Marshal(&n)
	got := string(out)
	for _, leaked := range []string{"sk-123", "tok_x", "hunter2", "s3", "qs-secret", "qs-key", "qs-dash", "qs-sig"} {
		if strings.Contains(got, leaked) {
			t.Errorf("%q not redacted:\n%s", leaked, got)
		}
	}
	for _, kept := range []string{"api_key_env: OPENAI_API_KEY", "port: 1", "https://user:redacted@example.com/v1", `empty_secret: ""`, "model=m", "alt=json", "api-version=2024"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%q missing:\n%s", kept, got)
		}
	}
}
