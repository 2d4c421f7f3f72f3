package main

import (
	"fmt"
	"regexp"

	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v4"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/supervisor"
)

func configCommand() *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "check or show the configuration",
		Subcommands: []*cli.Command{
			{
				Name:  "check",
				Usage: "validate the config file without starting anything",
				Flags: []cli.Flag{configFlag},
				Action: func(c *cli.Context) error {
					cfg, err := loadFromFlags(c)
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "config ok: %s\n", cfg.Source)
					return nil
				},
			},
			{
				Name:  "show",
				Usage: "print the effective config (defaults filled in, secrets redacted)",
				Flags: []cli.Flag{configFlag},
				Action: func(c *cli.Context) error {
					cfg, err := loadFromFlags(c)
					if err != nil {
						return err
					}
					out, err := effectiveYAML(cfg)
					if err != nil {
						return cli.Exit("hub: "+err.Error(), exitFailed)
					}
					fmt.Fprintf(c.App.Writer, "# effective config from %s\n%s", cfg.Source, out)
					return nil
				},
			},
		},
	}
}

func loadFromFlags(c *cli.Context) (*supervisor.Config, error) {
	dirs, err := hub.DirsFromEnv()
	if err != nil {
		return nil, cli.Exit("hub: "+err.Error(), exitFailed)
	}
	cfg, err := loadConfig(c.String("config"), dirs)
	if err != nil {
		return nil, cli.Exit("hub: "+err.Error(), exitFailed)
	}
	return cfg, nil
}

// secretKey matches config keys whose values are credentials.
var secretKey = regexp.MustCompile(`(?i)(token|secret|password|api_?key)`)

// effectiveYAML renders cfg as YAML with every credential-like value
// replaced by "<redacted>".
func effectiveYAML(cfg *supervisor.Config) ([]byte, error) {
	sections := map[string]any{}
	for _, s := range cfg.Adapters {
		sections[s.Name] = s.Config
	}
	doc := map[string]any{"log": cfg.Log, "lifecycle": cfg.Lifecycle, "adapters": sections}
	var node yaml.Node
	b, err := yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(b, &node); err != nil {
		return nil, err
	}
	redact(&node)
	return yaml.Marshal(&node)
}

func redact(n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if secretKey.MatchString(k.Value) && v.Kind == yaml.ScalarNode && v.Value != "" {
				v.Value, v.Tag, v.Style = "<redacted>", "!!str", 0
				continue
			}
			redact(v)
		}
		return
	}
	for _, c := range n.Content {
		redact(c)
	}
}
