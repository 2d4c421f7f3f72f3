package opencode

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Defaults and bounds of the spec's GETMCP_OPENCODE_* settings.
const (
	DefaultURL        = "http://127.0.0.1:4096"
	DefaultUsername   = "opencode"
	DefaultMaxWorkers = 8
	MinWorkers        = 1
	MaxWorkersLimit   = 16
)

// EnvPrefix starts every environment variable Config reads.
const EnvPrefix = "GETMCP_OPENCODE_"

// Config is the plugin's configuration: the spec's GETMCP_OPENCODE_*
// variables, also readable as the `adapters.geturl.opencode` section of
// hub.yaml. Pointer-free so the zero value is "unset"; NewConfig holds the
// defaults.
type Config struct {
	// Enabled false removes the plugin from the runtime.
	Enabled bool `yaml:"enabled"`
	// URL is the loopback OpenCode origin; no port scanning is done.
	URL string `yaml:"url"`
	// Username is the Basic-auth user for the password credentials.
	Username string `yaml:"username"`
	// DeviceToken is a standing credential. OpenCode 1.18 has no device
	// tokens: it is sent as the Basic password (see README).
	DeviceToken string `yaml:"device_token,omitempty"`
	// BootstrapPassword is the one-time pairing secret; the plugin drops
	// its copy once the first connection has used it.
	BootstrapPassword string `yaml:"bootstrap_password,omitempty"`
	// DeviceID names the paired device for cleanup-capable integrations;
	// it is reported, never sent.
	DeviceID string `yaml:"device_id,omitempty"`
	// AllowExisting permits execution-oriented control (send, turn,
	// resume, set_selection, background_subagents) of sessions geturl did
	// not create.
	AllowExisting bool `yaml:"allow_existing"`
	// AllowNested lets workers use OpenCode's task tool.
	AllowNested bool `yaml:"allow_nested"`
	// MaxWorkers is the admission ceiling for running workers, 1..16.
	MaxWorkers int `yaml:"max_workers"`
}

// NewConfig returns the defaults.
func NewConfig() Config {
	return Config{
		Enabled:       true,
		URL:           DefaultURL,
		Username:      DefaultUsername,
		AllowExisting: true,
		MaxWorkers:    DefaultMaxWorkers,
	}
}

// envKeys maps each variable suffix to its YAML key, which is also the key
// errors name.
var envKeys = []struct{ env, key string }{
	{"ENABLED", "enabled"},
	{"URL", "url"},
	{"USERNAME", "username"},
	{"DEVICE_TOKEN", "device_token"},
	{"BOOTSTRAP_PASSWORD", "bootstrap_password"},
	{"DEVICE_ID", "device_id"},
	{"ALLOW_EXISTING", "allow_existing"},
	{"ALLOW_NESTED", "allow_nested"},
	{"MAX_WORKERS", "max_workers"},
}

// FromEnv overlays the GETMCP_OPENCODE_* variables that are set (per
// lookup, os.LookupEnv when nil) on c. A malformed value is an error naming
// the variable; the value itself is never echoed, since two of them are
// secrets.
func (c *Config) FromEnv(lookup func(string) (string, bool)) error {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	for _, k := range envKeys {
		v, ok := lookup(EnvPrefix + k.env)
		if !ok {
			continue
		}
		if err := c.set(k.key, v); err != nil {
			return fmt.Errorf("%s%s: %w", EnvPrefix, k.env, err)
		}
	}
	return nil
}

func (c *Config) set(key, v string) error {
	v = strings.TrimSpace(v)
	var err error
	switch key {
	case "enabled":
		c.Enabled, err = parseBool(v)
	case "url":
		c.URL = v
	case "username":
		c.Username = v
	case "device_token":
		c.DeviceToken = v
	case "bootstrap_password":
		c.BootstrapPassword = v
	case "device_id":
		c.DeviceID = v
	case "allow_existing":
		c.AllowExisting, err = parseBool(v)
	case "allow_nested":
		c.AllowNested, err = parseBool(v)
	case "max_workers":
		c.MaxWorkers, err = strconv.Atoi(v)
		if err != nil {
			err = fmt.Errorf("not an integer")
		}
	}
	return err
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off", "":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean (true/false)")
}

// Validate checks the configuration; errors name the YAML key.
func (c *Config) Validate() error {
	if !c.Enabled {
		return nil
	}
	if _, err := ParseOrigin(c.URL); err != nil {
		return fmt.Errorf("url: %w", err)
	}
	if c.Username == "" || strings.ContainsAny(c.Username, ":\r\n") {
		return fmt.Errorf("username: must be non-empty without ':' or line breaks")
	}
	if strings.ContainsAny(c.DeviceToken, "\r\n") {
		return fmt.Errorf("device_token: must not contain line breaks")
	}
	if strings.ContainsAny(c.BootstrapPassword, "\r\n") {
		return fmt.Errorf("bootstrap_password: must not contain line breaks")
	}
	if c.MaxWorkers < MinWorkers || c.MaxWorkers > MaxWorkersLimit {
		return fmt.Errorf("max_workers: must be %d..%d, got %d", MinWorkers, MaxWorkersLimit, c.MaxWorkers)
	}
	return nil
}
