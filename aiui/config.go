package aiui

import (
	"fmt"
	"net/url"
	"regexp"

	"github.com/hubdev/hub/adapters"
)

// Config is the `adapters.aiui` section of hub.yaml.
type Config struct {
	adapters.Base `yaml:",inline"`
	// Port is the channel backend's loopback port (0 = OS-assigned).
	Port int `yaml:"port"`
	// Origins are app origins allowed on /ws, /tools, /prompt and /debug in
	// addition to loopback origins.
	Origins []string `yaml:"origins"`
	// MaxFrameBytes bounds one /ws message (a whole frame). Bigger media is
	// sent in chunks across several frames of one thread.
	MaxFrameBytes int `yaml:"max_frame_bytes"`
	// MaxMessageBytes bounds a POST /prompt body, one /tools message, a
	// control request, and a thread's accumulated text.
	MaxMessageBytes int `yaml:"max_message_bytes"`
	// CallTimeoutMS bounds a routed page-tool call.
	CallTimeoutMS int `yaml:"call_timeout_ms"`
	// DebounceMS is the page-tools change-signal window.
	DebounceMS int `yaml:"debounce_ms"`
	// PromptRecord is how many delivered prompts the record keeps.
	PromptRecord int `yaml:"prompt_record"`
	// TranscribeBaseURL is the OpenAI-compatible REST base for
	// transcription and the correction diff.
	TranscribeBaseURL string `yaml:"transcribe_base_url"`
	// TranscribeModel is used when a client's intent config names none.
	TranscribeModel string `yaml:"transcribe_model"`
	// CorrectionModel is used when a client's intent config names none.
	CorrectionModel string `yaml:"correction_model"`
	// RealtimeModel is the realtime transcriber's default model.
	RealtimeModel string `yaml:"realtime_model"`
	// APIKeyEnv names the environment variable holding the API key. The
	// key itself is never in the config file.
	APIKeyEnv string `yaml:"api_key_env"`
	// RequirePromptKey makes POST /prompt take only requests carrying the
	// backend's per-start prompt key (Authorization: Bearer, from the
	// control file), refusing the spec's unauthenticated posts: any local
	// user could otherwise speak to the agent. Pages speak /ws, which it
	// does not change.
	RequirePromptKey bool `yaml:"require_prompt_key"`
}

// Defaults (kept identical to configs/default.yaml).
const (
	DefaultPort              = 8686
	DefaultMaxFrameBytes     = 32 << 20
	DefaultMaxMessageBytes   = 4 << 20
	DefaultCallTimeoutMS     = 15000
	DefaultDebounceMS        = 500
	DefaultPromptRecord      = 500
	DefaultTranscribeBaseURL = "https://api.openai.com/v1"
	DefaultTranscribeModel   = "gpt-4o-mini-transcribe"
	DefaultCorrectionModel   = "gpt-4o-mini"
	DefaultRealtimeModel     = "gpt-realtime-whisper"
	DefaultAPIKeyEnv         = "OPENAI_API_KEY"
)

// NewConfig returns the section's defaults.
func NewConfig() *Config { return DefaultConfig() }

// DefaultConfig is NewConfig with its concrete type.
func DefaultConfig() *Config {
	return &Config{
		Base:              adapters.Base{Enabled: true},
		Port:              DefaultPort,
		Origins:           []string{},
		MaxFrameBytes:     DefaultMaxFrameBytes,
		MaxMessageBytes:   DefaultMaxMessageBytes,
		CallTimeoutMS:     DefaultCallTimeoutMS,
		DebounceMS:        DefaultDebounceMS,
		PromptRecord:      DefaultPromptRecord,
		TranscribeBaseURL: DefaultTranscribeBaseURL,
		TranscribeModel:   DefaultTranscribeModel,
		CorrectionModel:   DefaultCorrectionModel,
		RealtimeModel:     DefaultRealtimeModel,
		APIKeyEnv:         DefaultAPIKeyEnv,
	}
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ConfigPorts is the backend's port (adapters.PortUser).
func (c *Config) ConfigPorts() []adapters.PortKey {
	return []adapters.PortKey{{Key: "port", Ports: []int{c.Port}}}
}

// Validate checks the section.
func (c *Config) Validate() error {
	if err := c.Base.Validate(); err != nil {
		return err
	}
	for _, o := range c.Origins {
		if err := adapters.ValidateOrigin("origins", o); err != nil {
			return err
		}
	}
	if err := adapters.ValidatePort("port", c.Port); err != nil {
		return err
	}
	positive := []struct {
		key string
		v   int
		min int
	}{
		{"max_frame_bytes", c.MaxFrameBytes, 64 << 10},
		{"max_message_bytes", c.MaxMessageBytes, 4 << 10},
		{"call_timeout_ms", c.CallTimeoutMS, 1},
		{"debounce_ms", c.DebounceMS, 1},
		{"prompt_record", c.PromptRecord, 1},
	}
	for _, p := range positive {
		if p.v < p.min {
			return fmt.Errorf("%s: must be at least %d, got %d", p.key, p.min, p.v)
		}
	}
	if u, err := url.Parse(c.TranscribeBaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("transcribe_base_url: must be an http(s) URL")
	} else if u.User != nil {
		// the key comes from api_key_env; a URL is logged and shown in errors
		return fmt.Errorf("transcribe_base_url: must not carry credentials (the key comes from api_key_env)")
	}
	if !envName.MatchString(c.APIKeyEnv) {
		return fmt.Errorf("api_key_env: must be an environment variable name, got %q", c.APIKeyEnv)
	}
	return nil
}
