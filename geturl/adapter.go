package geturl

import "github.com/hubdev/hub/adapters"

// Config is the `adapters.geturl` section of hub.yaml.
type Config struct {
	adapters.Base `yaml:",inline"`
	// Port is the data-plane gateway port.
	Port int `yaml:"port"`
	// ControlPort is the operator control surface port.
	ControlPort int `yaml:"control_port"`
}

// NewConfig returns the section's defaults, with the spec's ports.
func NewConfig() *Config {
	return &Config{Base: adapters.Base{Enabled: true}, Port: 47432, ControlPort: 47433}
}

// Validate checks the section.
func (c *Config) Validate() error {
	if err := adapters.ValidatePort("port", c.Port); err != nil {
		return err
	}
	return adapters.ValidatePort("control_port", c.ControlPort)
}

// Factory registers the geturl adapter; until its protocol lands, New
// reports adapters.ErrNotImplemented.
func Factory() adapters.Factory {
	return adapters.FactoryFor("geturl", NewConfig, func(*Config) (adapters.Adapter, error) {
		return nil, adapters.ErrNotImplemented
	}, nil)
}
