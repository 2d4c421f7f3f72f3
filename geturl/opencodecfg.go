package geturl

import (
	"os"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/hubdev/hub/geturl/plugin/opencode"
)

// OpenCodeConfig is the `adapters.geturl.opencode` section: the OpenCode
// Control plugin's settings (opencode.Config's keys). The spec's
// GETMCP_OPENCODE_* environment fills every key the YAML leaves unset; a
// key written in hub.yaml wins over the environment.
type OpenCodeConfig struct {
	opencode.Config `yaml:",inline"`
	// set holds the keys hub.yaml wrote.
	set map[string]bool
}

// UnmarshalYAML decodes the section strictly and remembers which keys it
// had, so the environment fills only the others.
func (o *OpenCodeConfig) UnmarshalYAML(node *yaml.Node) error {
	if node.Kind == yaml.MappingNode {
		o.set = map[string]bool{}
		for i := 0; i+1 < len(node.Content); i += 2 {
			o.set[node.Content[i].Value] = true
		}
	}
	return node.Load(&o.Config, yaml.WithKnownFields(), yaml.WithUniqueKeys())
}

// Effective is the plugin's configuration: the section, with each key it
// left unset taken from the environment when set there (lookup is
// os.LookupEnv when nil).
func (o *OpenCodeConfig) Effective(lookup func(string) (string, bool)) (opencode.Config, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	c := o.Config
	err := c.FromEnv(func(name string) (string, bool) {
		key := strings.ToLower(strings.TrimPrefix(name, opencode.EnvPrefix))
		if o.set[key] {
			return "", false
		}
		return lookup(name)
	})
	return c, err
}
