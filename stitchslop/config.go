package stitchslop

import (
	"github.com/hubdev/hub/adapters"
)

// Config is the `adapters.stitchslop` section of hub.yaml.
type Config struct {
	adapters.Base `yaml:",inline"`
	// Origin is the only site allowed to connect.
	Origin string `yaml:"origin"`
	// Ports are scanned in order; the first free one is bound.
	Ports []int `yaml:"ports"`
	// ConfigDir holds pairing.json and the session files.
	ConfigDir string `yaml:"config_dir"`
}

// DefaultConfigDir holds pairing.json and the session files unless
// config_dir or --config-dir says otherwise; "~/" is the user's home.
const DefaultConfigDir = "~/.stitchslop"

// DefaultOrigin is the production Stitch Slop site.
const DefaultOrigin = "https://www.stitchslop.com"

// DefaultPorts are the four ports page and bridge both walk (spec §2.1).
var DefaultPorts = []int{8787, 8788, 8789, 8790}

// NewConfig returns the section's defaults.
func NewConfig() *Config {
	return &Config{
		Base:      adapters.Base{Enabled: true},
		Origin:    DefaultOrigin,
		Ports:     append([]int(nil), DefaultPorts...),
		ConfigDir: DefaultConfigDir,
	}
}

// ConfigPorts is the scan list (adapters.PortUser).
func (c *Config) ConfigPorts() []adapters.PortKey {
	return []adapters.PortKey{{Key: "ports", Ports: c.Ports}}
}

// Validate checks the section.
func (c *Config) Validate() error {
	if err := adapters.ValidateOrigin("origin", c.Origin); err != nil {
		return err
	}
	return adapters.ValidatePorts("ports", c.Ports)
}
