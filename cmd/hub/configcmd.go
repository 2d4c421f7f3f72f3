package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v4"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/internal/lazyre"
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
						return hub.Exit(hub.ExitFailed, "hub: "+err.Error())
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
		return nil, hub.Exit(hub.ExitFailed, "hub: "+err.Error())
	}
	cfg, err := loadConfig(c.String("config"), dirs)
	if err != nil {
		return nil, hub.Exit(hub.ExitFailed, "hub: "+err.Error())
	}
	return cfg, nil
}

// secretKey matches config keys whose values are credentials. A key ending
// in _env names an environment variable (e.g. api_key_env: OPENAI_API_KEY)
// and holds no secret itself.
var secretKey = lazyre.New(`(?i)(token|secret|password|passwd|api_?key)`)

func isSecretKey(k string) bool {
	return secretKey().MatchString(k) && !strings.HasSuffix(strings.ToLower(k), "_env")
}

// secretParam matches the query parameters that carry credentials beyond
// what secretKey names: Google's ?key=, Azure's ?api-key=, signed URLs'
// signatures.
var secretParam = lazyre.New(`(?i)^(key|api-key|sig|signature|auth|x-amz-signature|x-goog-signature|credential|x-amz-credential)$`)

func isSecretParam(k string) bool { return isSecretKey(k) || secretParam().MatchString(k) }

// effectiveYAML renders cfg as YAML with every credential-like value
// replaced by "<redacted>".
func effectiveYAML(cfg *supervisor.Config) ([]byte, error) {
	sections := map[string]any{}
	for _, s := range cfg.Adapters {
		sections[s.Name] = s.Config
	}
	doc := map[string]any{"log": cfg.Log, "lifecycle": cfg.Lifecycle, "runtime": cfg.Runtime, "adapters": sections}
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

// redact replaces credential values with "<redacted>", and in any URL its
// password and credential-named query values with "redacted".
func redact(n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if isSecretKey(k.Value) && v.Kind == yaml.ScalarNode && v.Value != "" {
				v.Value, v.Tag, v.Style = "<redacted>", "!!str", 0
				continue
			}
			redact(v)
		}
	case yaml.ScalarNode:
		u, err := url.Parse(n.Value)
		if err != nil || u.Scheme == "" {
			return
		}
		changed := false
		if _, hasPassword := u.User.Password(); hasPassword {
			u.User = url.UserPassword(u.User.Username(), "redacted")
			changed = true
		}
		// A key in the query string (?api_key=…) is as secret as one in
		// its own config key.
		if q := u.Query(); len(q) > 0 {
			for k := range q {
				if isSecretParam(k) {
					q.Set(k, "redacted")
					changed = true
				}
			}
			if changed {
				u.RawQuery = q.Encode()
			}
		}
		if changed {
			n.Value = u.String()
		}
	default:
		for _, c := range n.Content {
			redact(c)
		}
	}
}
