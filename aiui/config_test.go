package aiui

import (
	"bytes"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v4"

	"github.com/hubdev/hub/configs"
)

// TestConfigFilesMatchDefaults keeps NewConfig, default.yaml and
// example.yaml in step: both files decode (strictly) to the defaults.
func TestConfigFilesMatchDefaults(t *testing.T) {
	for name, data := range map[string][]byte{"default.yaml": configs.Default, "example.yaml": configs.Example} {
		var doc struct {
			Adapters map[string]yaml.Node `yaml:"adapters"`
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		node := doc.Adapters["aiui"]
		out, _ := yaml.Marshal(&node)
		got := &Config{}
		dec := yaml.NewDecoder(bytes.NewReader(out))
		dec.KnownFields(true)
		if err := dec.Decode(got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, DefaultConfig()) {
			t.Errorf("%s aiui section = %+v\nwant %+v", name, got, DefaultConfig())
		}
		if err := got.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
	}{
		{"port", func(c *Config) { c.Port = 70000 }},
		{"origin", func(c *Config) { c.Origins = []string{"example.com"} }},
		{"frame limit", func(c *Config) { c.MaxFrameBytes = 10 }},
		{"timeout", func(c *Config) { c.CallTimeoutMS = 0 }},
		{"key env", func(c *Config) { c.APIKeyEnv = "sk-not-a-name!" }},
		{"address", func(c *Config) { c.Address = "0.0.0.0" }},
		{"base url scheme", func(c *Config) { c.TranscribeBaseURL = "ftp://api.example/v1" }},
		{"base url shape", func(c *Config) { c.TranscribeBaseURL = "api.openai.com/v1" }},
		{"base url credentials", func(c *Config) { c.TranscribeBaseURL = "https://user:sk-secret@api.example/v1" }},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		tt.mutate(c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: invalid config accepted", tt.name)
		}
	}
}
