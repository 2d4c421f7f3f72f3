package supervisor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/configs"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/internal/lazyre"
)

// MaxConfigSize bounds the config file; a larger one is surely a mistake.
const MaxConfigSize = 1 << 20

// Config is the effective hub configuration.
type Config struct {
	Log       LogConfig       `yaml:"log"`
	Lifecycle LifecycleConfig `yaml:"lifecycle"`
	Runtime   RuntimeConfig   `yaml:"runtime"`
	// Adapters holds one validated section per registered adapter, in
	// registry order; sections absent from the file keep their defaults.
	Adapters []Section `yaml:"-"`
	// Source is the file the config came from, or "embedded default".
	Source string `yaml:"-"`
}

// Section is one adapter's config with its name.
type Section struct {
	Name    string
	Factory adapters.Factory
	Config  adapters.Config
}

// LogConfig is the `log` section.
type LogConfig struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
}

// LifecycleConfig is the `lifecycle` section; 0 disables a rule.
type LifecycleConfig struct {
	NoPageMinutes    int `yaml:"no_page_minutes"`
	AgentIdleMinutes int `yaml:"agent_idle_minutes"`
	ShutdownSeconds  int `yaml:"shutdown_seconds"`
}

// MaxMaxProcs bounds runtime.max_procs: far beyond any laptop's cores,
// and below the point where the Go runtime's per-P state is a waste.
const MaxMaxProcs = 1024

// RuntimeConfig is the `runtime` section: the shape of the hub process.
type RuntimeConfig struct {
	// MaxProcs is how many OS threads run Go code at once (GOMAXPROCS);
	// 0 keeps the hub's default. GOMAXPROCS in the environment wins.
	MaxProcs int `yaml:"max_procs"`
}

// IdleRules converts the section to the lifecycle service's rules.
func (c LifecycleConfig) IdleRules() hub.IdleRules {
	return hub.IdleRules{
		NoPageWithin: time.Duration(c.NoPageMinutes) * time.Minute,
		AgentIdle:    time.Duration(c.AgentIdleMinutes) * time.Minute,
	}
}

// ShutdownTimeout is the graceful shutdown deadline.
func (c LifecycleConfig) ShutdownTimeout() time.Duration {
	return time.Duration(c.ShutdownSeconds) * time.Second
}

// Section returns the named section.
func (c *Config) Section(name string) (Section, bool) {
	for _, s := range c.Adapters {
		if s.Name == name {
			return s, true
		}
	}
	return Section{}, false
}

// fileConfig is the document shape; adapter sections stay nodes until their
// factory says what they decode into.
type fileConfig struct {
	Log       LogConfig            `yaml:"log"`
	Lifecycle LifecycleConfig      `yaml:"lifecycle"`
	Runtime   RuntimeConfig        `yaml:"runtime"`
	Adapters  map[string]yaml.Node `yaml:"adapters"`
}

func defaultConfig() fileConfig {
	return fileConfig{
		Log:       LogConfig{Level: "info", Format: "text"},
		Lifecycle: LifecycleConfig{NoPageMinutes: 30, AgentIdleMinutes: 120, ShutdownSeconds: 10},
	}
}

// ConfigPath picks the config file: the explicit path if given (it must
// exist), else $XDG_CONFIG_HOME/hub/hub.yaml if it exists, else "" for the
// embedded default.
func ConfigPath(explicit string, dirs hub.Dirs) (string, error) {
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", fmt.Errorf("config file %s: %w", explicit, errors.Unwrap(err))
		}
		return explicit, nil
	}
	p := dirs.Config + "/hub.yaml"
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return "", nil
}

// LoadConfig reads path ("" = the embedded default) and validates it.
func LoadConfig(path string, reg *adapters.Registry) (*Config, error) {
	data, name := configs.Default, "embedded default"
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("config file %s: %w", path, errors.Unwrap(err))
		}
		defer f.Close()
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(io.LimitReader(f, MaxConfigSize+1)); err != nil {
			return nil, fmt.Errorf("config file %s: %v", path, err)
		}
		if buf.Len() > MaxConfigSize {
			return nil, fmt.Errorf("%s: larger than %d bytes", path, MaxConfigSize)
		}
		data, name = buf.Bytes(), path
	}
	return ParseConfig(data, name, reg)
}

// ParseConfig decodes and validates one config document. Every error names
// the file, the line when known, and the key.
func ParseConfig(data []byte, name string, reg *adapters.Registry) (*Config, error) {
	fc := defaultConfig()
	if hasDocument(data) {
		if err := yaml.Load(data, &fc, yaml.WithKnownFields(), yaml.WithUniqueKeys()); err != nil {
			return nil, yamlError(name, data, "", err)
		}
	}
	cfg := &Config{Log: fc.Log, Lifecycle: fc.Lifecycle, Runtime: fc.Runtime, Source: name}
	at := func(section, key string) string { return locate(name, keyLine(data, section, key)) }
	if _, err := hub.ParseLevel(cfg.Log.Level); err != nil {
		return nil, fmt.Errorf("%s: log.level: %v", at("log", "level"), err)
	}
	if f := strings.ToLower(cfg.Log.Format); f != "text" && f != "json" {
		return nil, fmt.Errorf("%s: log.format: must be text or json, got %q", at("log", "format"), cfg.Log.Format)
	}
	for _, kv := range []struct {
		key   string
		v     int
		unit  time.Duration
		units string
	}{
		{"no_page_minutes", cfg.Lifecycle.NoPageMinutes, time.Minute, "minutes"},
		{"agent_idle_minutes", cfg.Lifecycle.AgentIdleMinutes, time.Minute, "minutes"},
		{"shutdown_seconds", cfg.Lifecycle.ShutdownSeconds, time.Second, "seconds"},
	} {
		if kv.v < 0 {
			return nil, fmt.Errorf("%s: lifecycle.%s: must be 0 (disabled) or more, got %d", at("lifecycle", kv.key), kv.key, kv.v)
		}
		// Beyond this the time.Duration wraps: a huge idle rule would
		// fire within seconds, or be silently disabled.
		if most := int64(math.MaxInt64 / kv.unit); int64(kv.v) > most {
			return nil, fmt.Errorf("%s: lifecycle.%s: must be at most %d %s, got %d", at("lifecycle", kv.key), kv.key, most, kv.units, kv.v)
		}
	}
	if cfg.Lifecycle.ShutdownSeconds == 0 {
		return nil, fmt.Errorf("%s: lifecycle.shutdown_seconds: must be at least 1", at("lifecycle", "shutdown_seconds"))
	}
	if mp := cfg.Runtime.MaxProcs; mp < 0 || mp > MaxMaxProcs {
		return nil, fmt.Errorf("%s: runtime.max_procs: must be 0 (the default) to %d, got %d", at("runtime", "max_procs"), MaxMaxProcs, mp)
	}
	for _, key := range slices.Sorted(maps.Keys(fc.Adapters)) {
		if _, ok := reg.Lookup(key); !ok {
			node := fc.Adapters[key]
			return nil, fmt.Errorf("%s:%d: adapters.%s: unknown adapter (known: %s)", name, node.Line, key, strings.Join(reg.Names(), ", "))
		}
	}
	for _, n := range reg.Names() {
		f, _ := reg.Lookup(n)
		sec := f.NewConfig()
		node, present := fc.Adapters[n]
		if present && node.Kind != 0 && node.Tag != "!!null" {
			if err := node.Load(sec, yaml.WithKnownFields(), yaml.WithUniqueKeys()); err != nil {
				return nil, yamlError(name, data, "adapters."+n+".", err)
			}
		}
		for _, validate := range []func() error{sec.Common().Validate, sec.Validate} {
			if err := validate(); err != nil {
				line := 0
				if present {
					line = fieldLine(&node, strings.SplitN(err.Error(), ":", 2)[0])
				}
				return nil, fmt.Errorf("%s: adapters.%s.%v", locate(name, line), n, err)
			}
		}
		cfg.Adapters = append(cfg.Adapters, Section{Name: n, Factory: f, Config: sec})
	}
	if err := portClash(cfg.Adapters); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return cfg, nil
}

// portClash refuses two enabled adapters naming one port: one of them
// could not start (and one adapter's start failure stops the hub), or a
// page scanning for its bridge would reach another.
func portClash(secs []Section) error {
	owner := map[int]string{}
	for _, sec := range secs {
		pu, ok := sec.Config.(adapters.PortUser)
		if !ok || !sec.Config.Common().Enabled || needsUser(sec.Config) != "" {
			continue
		}
		for _, pk := range pu.ConfigPorts() {
			key := "adapters." + sec.Name + "." + pk.Key
			for _, p := range pk.Ports {
				if p == 0 {
					continue
				}
				if other, taken := owner[p]; taken && other != key {
					return fmt.Errorf("%s: port %d is also in %s; give each adapter its own ports", key, p, other)
				}
				owner[p] = key
			}
		}
	}
	return nil
}

func locate(name string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", name, line)
	}
	return name
}

// keyLine finds the line of section.key in the document (0 if absent), so
// a value that decoded but is out of range is reported at its line too.
func keyLine(data []byte, section, key string) int {
	var root yaml.Node
	if yaml.Load(data, &root) != nil || root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return 0
	}
	top := root.Content[0]
	if top.Kind != yaml.MappingNode {
		return 0
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == section {
			if line := fieldLine(top.Content[i+1], key); top.Content[i+1].Kind == yaml.MappingNode {
				return line
			}
		}
	}
	return 0
}

// fieldLine finds the line of key inside a mapping node (0 if absent).
func fieldLine(n *yaml.Node, key string) int {
	if n.Kind != yaml.MappingNode {
		return n.Line
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i].Line
		}
	}
	return n.Line
}

// The YAML decoder's messages, read back only when a config is wrong, so
// compiled on first use.
var (
	notFound    = lazyre.New(`field (\S+) not found in type \S.*`)
	duplicate   = lazyre.New(`^mapping key "(.*)" already defined at line (\d+)$`)
	cannotBuild = lazyre.New("^cannot construct !!(\\w+) (`.*` )?into (\\S+)$")
)

// yamlKinds names YAML node tags for people.
var yamlKinds = map[string]string{"str": "a string", "int": "a number", "float": "a number",
	"bool": "true or false", "seq": "a list", "map": "a mapping", "null": "nothing"}

// wantKind names what a Go destination type expects, without Go syntax.
func wantKind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["), strings.Contains(goType, "."):
		return "a mapping of keys"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "bool":
		return "true or false"
	case goType == "string":
		return "a string"
	}
	return goType
}

// friendlyMessage rewrites a decoder message in the config's own terms.
func friendlyMessage(msg, keyPrefix string) string {
	if m := cannotBuild().FindStringSubmatch(msg); m != nil {
		got := yamlKinds[m[1]]
		if got == "" {
			got = "!!" + m[1]
		}
		if m[2] != "" {
			got += " " + strings.TrimSpace(m[2])
		}
		return fmt.Sprintf("wrong type: want %s, got %s", wantKind(m[3]), got)
	}
	if m := duplicate().FindStringSubmatch(msg); m != nil {
		return "duplicate key (first defined at line " + m[2] + ")"
	}
	return notFound().ReplaceAllString(msg, "unknown key "+`"`+keyPrefix+`$1"`)
}

// yamlError rewrites the decoder's errors as "file:line: key: message"
// lines, in the config's own terms rather than Go's.
func yamlError(name string, data []byte, keyPrefix string, err error) error {
	var many *yaml.LoadErrors
	var one *yaml.LoadError
	var lines []string
	var root yaml.Node
	_ = yaml.Load(data, &root) // best effort: only used to name keys
	add := func(e *yaml.LoadError) {
		msg := friendlyMessage(e.Message, keyPrefix)
		if m := notFound().FindStringSubmatch(e.Message); m != nil {
			// The decoder names the field alone; the user needs its path.
			if key := keyNamedAtLine(&root, e.Mark.Line, m[1], ""); key != "" {
				msg = `unknown key "` + key + `"`
			}
		} else if key := duplicateAt(&root, e); key != "" {
			msg = key + ": " + msg
		} else if key := keyAtLine(&root, e.Mark.Line, ""); key != "" {
			msg = key + ": " + msg
		}
		lines = append(lines, fmt.Sprintf("%s: %s", locate(name, e.Mark.Line), msg))
	}
	switch {
	case errors.As(err, &many):
		for _, e := range many.Errors {
			add(e)
		}
	case errors.As(err, &one):
		add(one)
	default:
		return fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return errors.New(strings.Join(lines, "\n"))
}

// duplicateAt is the path of the repeated key a duplicate-key error is
// about, or "". The error's line is the key's own: a section's value (a
// mapping) starts on the next line, where keyAtLine would look.
func duplicateAt(root *yaml.Node, e *yaml.LoadError) string {
	if m := duplicate().FindStringSubmatch(e.Message); m != nil {
		return keyNamedAtLine(root, e.Mark.Line, m[1], "")
	}
	return ""
}

// keyNamedAtLine returns the dotted path of the mapping key name written
// on line, or "".
func keyNamedAtLine(n *yaml.Node, line int, name, path string) string {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if k := keyNamedAtLine(c, line, name, path); k != "" {
				return k
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if k := keyNamedAtLine(c, line, name, fmt.Sprintf("%s[%d]", path, i)); k != "" {
				return k
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			switch {
			case k.Value == "<<": // a merge key adds its keys to this mapping
				p = path
			case path != "":
				p = path + "." + k.Value
			}
			if k.Line == line && k.Value == name {
				return p
			}
			if found := keyNamedAtLine(v, line, name, p); found != "" {
				return found
			}
		}
	}
	return ""
}

// keyAtLine returns the dotted path of the mapping key whose value starts
// on line, or "".
func keyAtLine(n *yaml.Node, line int, path string) string {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			if k := keyAtLine(c, line, path); k != "" {
				return k
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			if v.Line == line && v.Kind != yaml.MappingNode {
				return p
			}
			if found := keyAtLine(v, line, p); found != "" {
				return found
			}
			if v.Line == line {
				return p
			}
		}
	}
	return ""
}

// hasDocument reports whether data holds a YAML document at all. A file of
// comments only (a config commented out) holds none and is as empty as an
// empty file; loading it was an error, "no documents in stream".
func hasDocument(data []byte) bool {
	l, err := yaml.NewLoader(bytes.NewReader(data))
	if err != nil {
		return true // let the real load report it
	}
	var n yaml.Node
	return l.Load(&n) != io.EOF
}
