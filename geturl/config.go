package geturl

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/geturl/companion"
	"github.com/hubdev/hub/geturl/plugin/opencode"
	"github.com/hubdev/hub/geturl/session"
	"github.com/hubdev/hub/hub"
)

// Default ports of the contract: the data plane (the only one ever
// tunneled) and the operator control plane.
const (
	DefaultPort        = 47432
	DefaultControlPort = 47433
)

// PublicOriginEnv overrides nothing set in hub.yaml or on the command line;
// it fills public_origin when neither says anything.
const PublicOriginEnv = "GETMCP_PUBLIC_ORIGIN"

// Config is the `adapters.geturl` section of hub.yaml.
type Config struct {
	adapters.Base `yaml:",inline"`
	// Port is the data-plane gateway port.
	Port int `yaml:"port"`
	// ControlPort is the operator control surface port.
	ControlPort int `yaml:"control_port"`
	// PublicOrigin is the https origin a tunnel exposes the data plane at;
	// Init URLs start with it. Empty: http://127.0.0.1:<port>.
	PublicOrigin string `yaml:"public_origin,omitempty"`
	// Projects are registered (or updated to match) at every start.
	Projects []ProjectConfig `yaml:"projects,omitempty"`
	// OpenCode configures the bundled OpenCode Control plugin.
	OpenCode OpenCodeConfig `yaml:"opencode"`
	// Companion configures the browser companion.
	Companion CompanionConfig `yaml:"companion,omitempty"`
}

// CompanionConfig is the browser companion's section.
type CompanionConfig struct {
	// Lease is how long one heartbeat keeps a companion session's
	// authority (default 15s, 2s..5m); the extension heartbeats every
	// third of it.
	Lease time.Duration `yaml:"lease,omitempty"`
}

// lease is the effective lease.
func (c CompanionConfig) lease() time.Duration {
	if c.Lease == 0 {
		return companion.DefaultLease
	}
	return c.Lease
}

// ProjectConfig is one project root declared in hub.yaml.
type ProjectConfig struct {
	Name     string `yaml:"name"`
	Root     string `yaml:"root"`
	Write    bool   `yaml:"write,omitempty"`
	Terminal bool   `yaml:"terminal,omitempty"`
	// Bridges lets the project's sessions reach the hub's bridges (the
	// pages' tools) as /k plugins; it needs Write.
	Bridges bool `yaml:"bridges,omitempty"`
}

// NewConfig returns the section's defaults, with the spec's ports.
func NewConfig() *Config {
	return &Config{Base: adapters.Base{Enabled: true}, Port: DefaultPort, ControlPort: DefaultControlPort,
		OpenCode: OpenCodeConfig{Config: opencode.NewConfig()}}
}

// ConfigPorts is the data and control planes' ports (adapters.PortUser).
func (c *Config) ConfigPorts() []adapters.PortKey {
	return []adapters.PortKey{{Key: "port", Ports: []int{c.Port}}, {Key: "control_port", Ports: []int{c.ControlPort}}}
}

// Validate checks the section.
func (c *Config) Validate() error {
	if err := adapters.ValidatePort("port", c.Port); err != nil {
		return err
	}
	if err := adapters.ValidatePort("control_port", c.ControlPort); err != nil {
		return err
	}
	if c.Port != 0 && c.Port == c.ControlPort {
		return fmt.Errorf("control_port: must differ from port (the data plane is tunneled, the control plane never is), both are %d", c.Port)
	}
	if c.PublicOrigin != "" {
		if err := adapters.ValidateOrigin("public_origin", c.PublicOrigin); err != nil {
			return err
		}
	}
	if l := c.Companion.Lease; l != 0 && (l < companion.MinLease || l > companion.MaxLease) {
		return fmt.Errorf("companion.lease: must be between %s and %s, got %s", companion.MinLease, companion.MaxLease, l)
	}
	oc, err := c.OpenCode.Effective(nil)
	if err != nil {
		return fmt.Errorf("opencode: %w", err)
	}
	if err := oc.Validate(); err != nil {
		// A value hub.yaml left out came from the environment: say so, or
		// the operator looks for it in the file.
		key, rest, _ := strings.Cut(err.Error(), ":")
		if env := opencode.EnvPrefix + strings.ToUpper(key); !c.OpenCode.set[key] {
			if _, fromEnv := os.LookupEnv(env); fromEnv {
				return fmt.Errorf("opencode.%s (from $%s):%s", key, env, rest)
			}
		}
		return fmt.Errorf("opencode.%w", err)
	}
	names := map[string]bool{}
	for i, p := range c.Projects {
		key := fmt.Sprintf("projects[%d]", i)
		if p.Name == "" || names[p.Name] {
			return fmt.Errorf("%s.name: must be set and unique, got %q", key, p.Name)
		}
		names[p.Name] = true
		if err := session.CheckName(p.Name); err != nil {
			return fmt.Errorf("%s.name: %v", key, err)
		}
		if !filepath.IsAbs(hub.ExpandHome(p.Root, "/")) && p.Root != "~" {
			return fmt.Errorf("%s.root: must be an absolute path (or start with ~/), got %q", key, p.Root)
		}
		if p.Bridges && !p.Write {
			return fmt.Errorf("%s.bridges: needs write: true (a page's tool can do anything the page can, so reaching the hub's bridges is at least a write)", key)
		}
	}
	return nil
}

// publicOrigin is the effective public origin: the config (or flag) first,
// then $GETMCP_PUBLIC_ORIGIN; "" when neither is a usable origin.
func (c *Config) publicOrigin() string {
	v := c.PublicOrigin
	if v == "" {
		v = os.Getenv(PublicOriginEnv)
	}
	o, ok := hub.NormalizeOrigin(v)
	if !ok {
		return ""
	}
	return o
}
