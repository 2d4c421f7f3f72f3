package adapters

import (
	"fmt"
	"strings"

	"github.com/hubdev/hub/hub"
)

// Config is an adapter's section under `adapters.<name>` in hub.yaml. A
// Factory's NewConfig returns a pointer to a struct with yaml tags and its
// defaults filled in; the loader decodes the section onto it strictly.
type Config interface {
	// Common returns the keys every section shares (embed Base for it).
	Common() *Base
	// Validate checks the decoded values. Errors name the key relative to
	// the section, e.g. `website: must be an origin like https://example.com,
	// got "example.com"`; the loader prefixes `adapters.<name>.`.
	Validate() error
}

// NeedsUser is implemented by configs that can be enabled yet still unable
// to run until the user sets something. A non-empty answer keeps the
// adapter disabled and is shown as its status note, e.g.
// "disabled: set adapters.pixelle.website".
type NeedsUser interface {
	NeedsUser() string
}

// PortUser is implemented by configs that bind configured ports. The
// loader refuses a config in which two enabled adapters name one port:
// one of them could not start, and a page scanning for one bridge could
// reach another.
type PortUser interface {
	// ConfigPorts lists each port key (relative to the section, e.g.
	// "port") with the ports it names; 0 (OS-assigned) is ignored.
	ConfigPorts() []PortKey
}

// PortKey is one port key and the ports it names.
type PortKey struct {
	Key   string
	Ports []int
}

// Base holds the keys every adapter section has. Embed it inline:
//
//	type Config struct {
//		adapters.Base `yaml:",inline"`
//		Port int `yaml:"port"`
//	}
type Base struct {
	Enabled bool `yaml:"enabled"`
	// Address is the listen address. It exists so a config that asks for
	// anything but loopback fails loudly instead of being silently ignored.
	Address string `yaml:"address,omitempty"`
}

// Common returns b itself.
func (b *Base) Common() *Base { return b }

// Validate checks the shared keys.
func (b *Base) Validate() error {
	if b.Address != "" && b.Address != hub.LoopbackHost {
		return fmt.Errorf("address: must be %s (hub listens on loopback only), got %q", hub.LoopbackHost, b.Address)
	}
	return nil
}

// ValidatePort checks one port key: 1..65535, or 0 for an OS-assigned port.
func ValidatePort(key string, port int) error {
	if port < 0 || port > 65535 {
		return fmt.Errorf("%s: must be a port in 1..65535 (or 0 for any free port), got %d", key, port)
	}
	return nil
}

// ValidatePorts checks a non-empty port list.
func ValidatePorts(key string, ports []int) error {
	if len(ports) == 0 {
		return fmt.Errorf("%s: must list at least one port", key)
	}
	for _, p := range ports {
		if err := ValidatePort(key, p); err != nil {
			return err
		}
	}
	return nil
}

// ValidateOrigin checks an origin key such as `origin` or `website`.
func ValidateOrigin(key, value string) error {
	if _, ok := hub.NormalizeOrigin(value); !ok || !strings.Contains(value, "://") {
		return fmt.Errorf("%s: must be an origin like https://example.com, got %q", key, value)
	}
	return nil
}
