package aiui

import (
	"github.com/hubdev/hub/adapters"
)

// Config is the `adapters.aiui` section of hub.yaml.
type Config struct {
	adapters.Base `yaml:",inline"`
	// Port is the channel backend's loopback port (0 = OS-assigned).
	Port int `yaml:"port"`
	// Origins are app origins allowed on /ws, /tools, /prompt and /debug in
	// addition to loopback origins.
	Origins []string `yaml:"origins"`
}

// DefaultPort is the hub's fixed, documented aiui port.
const DefaultPort = 8686

// NewConfig returns the section's defaults.
func NewConfig() adapters.Config {
	return &Config{Base: adapters.Base{Enabled: true}, Port: DefaultPort}
}

// Validate checks the section.
func (c *Config) Validate() error {
	for _, o := range c.Origins {
		if err := adapters.ValidateOrigin("origins", o); err != nil {
			return err
		}
	}
	return adapters.ValidatePort("port", c.Port)
}
