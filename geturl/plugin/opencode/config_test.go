package opencode

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

func TestConfigEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    func(Config) bool
		wantErr string
	}{
		{"defaults", nil, func(c Config) bool {
			return c.Enabled && c.URL == DefaultURL && c.Username == "opencode" && c.AllowExisting && !c.AllowNested && c.MaxWorkers == 8
		}, ""},
		{"all set", map[string]string{
			"GETMCP_OPENCODE_ENABLED": "false", "GETMCP_OPENCODE_URL": "http://[::1]:4545", "GETMCP_OPENCODE_USERNAME": "me",
			"GETMCP_OPENCODE_DEVICE_TOKEN": "tok", "GETMCP_OPENCODE_BOOTSTRAP_PASSWORD": "pw", "GETMCP_OPENCODE_DEVICE_ID": "dev1",
			"GETMCP_OPENCODE_ALLOW_EXISTING": "0", "GETMCP_OPENCODE_ALLOW_NESTED": "true", "GETMCP_OPENCODE_MAX_WORKERS": "16",
		}, func(c Config) bool {
			return !c.Enabled && c.URL == "http://[::1]:4545" && c.Username == "me" && c.DeviceToken == "tok" &&
				c.BootstrapPassword == "pw" && c.DeviceID == "dev1" && !c.AllowExisting && c.AllowNested && c.MaxWorkers == 16
		}, ""},
		{"bad bool", map[string]string{"GETMCP_OPENCODE_ALLOW_NESTED": "maybe"}, nil, "GETMCP_OPENCODE_ALLOW_NESTED"},
		{"bad int", map[string]string{"GETMCP_OPENCODE_MAX_WORKERS": "many"}, nil, "GETMCP_OPENCODE_MAX_WORKERS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewConfig()
			err := c.FromEnv(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || !tc.want(c) {
				t.Fatalf("config = %+v, err %v", c, err)
			}
		})
	}
}

func TestConfigYAML(t *testing.T) {
	src := `
enabled: true
url: http://localhost:4100
username: op
device_token: t0k
bootstrap_password: p4ss
device_id: d
allow_existing: false
allow_nested: true
max_workers: 3
`
	c := NewConfig()
	if err := yaml.Unmarshal([]byte(src), &c); err != nil {
		t.Fatal(err)
	}
	want := Config{Enabled: true, URL: "http://localhost:4100", Username: "op", DeviceToken: "t0k", BootstrapPassword: "p4ss",
		DeviceID: "d", AllowExisting: false, AllowNested: true, MaxWorkers: 3}
	if c != want {
		t.Fatalf("yaml = %+v", c)
	}
	// Keys left out keep their defaults.
	c = NewConfig()
	if err := yaml.Unmarshal([]byte("max_workers: 2\n"), &c); err != nil || c.URL != DefaultURL || !c.AllowExisting || c.MaxWorkers != 2 {
		t.Fatalf("partial yaml = %+v %v", c, err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		key  string // "" = valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"disabled skips checks", func(c *Config) { c.Enabled, c.URL = false, "http://example.com" }, ""},
		{"remote url", func(c *Config) { c.URL = "http://example.com:4096" }, "url:"},
		{"https", func(c *Config) { c.URL = "https://127.0.0.1:4096" }, "url:"},
		{"userinfo", func(c *Config) { c.URL = "http://opencode:secret@127.0.0.1:4096" }, "url:"},
		{"zero workers", func(c *Config) { c.MaxWorkers = 0 }, "max_workers:"},
		{"17 workers", func(c *Config) { c.MaxWorkers = 17 }, "max_workers:"},
		{"colon username", func(c *Config) { c.Username = "a:b" }, "username:"},
		{"newline password", func(c *Config) { c.BootstrapPassword = "se\ncret" }, "bootstrap_password:"},
		{"newline token", func(c *Config) { c.DeviceToken = "to\nken" }, "device_token:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewConfig()
			tc.mod(&c)
			err := c.Validate()
			switch {
			case tc.key == "" && err != nil:
				t.Fatalf("unexpected %v", err)
			case tc.key != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.key)):
				t.Fatalf("err = %v, want %s...", err, tc.key)
			case err != nil && (strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "cret")):
				t.Fatalf("error echoes a secret: %v", err)
			}
		})
	}
}

func TestParseOrigin(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://127.0.0.1:4096", "http://127.0.0.1:4096"},
		{"http://localhost:4096/", "http://localhost:4096"},
		{"HTTP://LOCALHOST:1", "http://localhost:1"},
		{"http://[::1]:4545", "http://[::1]:4545"},
		{"http://127.0.0.1", "http://127.0.0.1:80"},
		{"http://127.0.0.2:4096", ""},
		{"http://0.0.0.0:4096", ""},
		{"http://example.com", ""},
		{"http://localhost.example.com:4096", ""},
		{"https://127.0.0.1:4096", ""},
		{"ws://127.0.0.1:4096", ""},
		{"http://u:p@127.0.0.1:4096", ""},
		{"http://127.0.0.1:4096/api", ""},
		{"http://127.0.0.1:4096?x=1", ""},
		{"http://127.0.0.1:0", ""},
		{"http://127.0.0.1:99999", ""},
		{"127.0.0.1:4096", ""},
		{"", ""},
	} {
		got, err := ParseOrigin(tc.in)
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("ParseOrigin(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
