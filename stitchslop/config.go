package stitchslop

import (
	"time"

	"github.com/hubdev/hub/adapters"
)

// Config is one bridge's long-lived settings: the `adapters.stitchslop`
// section of hub.yaml, plus what the code that builds a bridge sets and a
// file never does (a token from the environment, the follow policy,
// limits tests shorten). New copies it; a run never changes it.
type Config struct {
	adapters.Base `yaml:",inline"`
	// Origin is the only site allowed to connect.
	Origin string `yaml:"origin"`
	// Ports are scanned in order; the first free one is bound ([0] asks
	// the OS). Default 8787..8790.
	Ports []int `yaml:"ports"`
	// ConfigDir holds pairing.json and the session files; "~/" is
	// expanded against env.Dirs.Home. Default DefaultConfigDir.
	ConfigDir string `yaml:"config_dir"`

	// Token is a one-time bootstrap token armed at start
	// (STITCHSLOP_TOKEN); never read from a file.
	Token string `yaml:"-"`
	// FollowOutside makes Serve follow a live bridge started outside this
	// process that already serves the origin from ConfigDir, instead of
	// binding a second one (see followOutside). The hub's adapter sets
	// it; a standalone bridge decides that before it is built (follower).
	FollowOutside bool `yaml:"-"`
	// Limits are the timings and sizes; zero means the default.
	Limits `yaml:"-"`
}

// Limits bound what a page or an agent can hold; zero means the default.
type Limits struct {
	AuthTimeout  time.Duration
	CallTimeout  time.Duration
	ProbeTimeout time.Duration
	MaxFrame     int
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

// withDefaults is a copy of c with every zero setting at its default.
func (c Config) withDefaults() Config {
	if len(c.Ports) == 0 {
		c.Ports = DefaultPorts
	}
	c.Ports = append([]int(nil), c.Ports...)
	if c.ConfigDir == "" {
		c.ConfigDir = DefaultConfigDir
	}
	if c.AuthTimeout <= 0 {
		c.AuthTimeout = DefaultAuthTimeout
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.ProbeTimeout <= 0 {
		c.ProbeTimeout = DefaultProbeTimeout
	}
	if c.MaxFrame <= 0 {
		c.MaxFrame = DefaultMaxFrame
	}
	return c
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
