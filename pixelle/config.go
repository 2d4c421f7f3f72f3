package pixelle

import (
	"github.com/hubdev/hub/adapters"
)

// Config is the `adapters.pixelle` section of hub.yaml.
type Config struct {
	adapters.Base `yaml:",inline"`
	// Website is the exact Pixelle origin allowed as a browser; required.
	Website string `yaml:"website"`
	// Port is the relay's loopback port.
	Port int `yaml:"port"`
}

// DefaultPort is the canonical relay port (RELAY = http://127.0.0.1:4317).
const DefaultPort = 4317

// NewConfig returns the section's defaults.
func NewConfig() *Config {
	return &Config{Base: adapters.Base{Enabled: true}, Port: DefaultPort}
}

// ConfigPorts is the relay's port (adapters.PortUser).
func (c *Config) ConfigPorts() []adapters.PortKey {
	return []adapters.PortKey{{Key: "port", Ports: []int{c.Port}}}
}

// Validate checks the section; an empty website is allowed and leaves the
// adapter disabled (see NeedsUser).
func (c *Config) Validate() error {
	if c.Website != "" {
		if err := adapters.ValidateOrigin("website", c.Website); err != nil {
			return err
		}
	}
	return adapters.ValidatePort("port", c.Port)
}

// NeedsUser keeps the relay off until the user names the website.
func (c *Config) NeedsUser() string {
	if c.Website == "" {
		return "disabled: set adapters.pixelle.website"
	}
	return ""
}
