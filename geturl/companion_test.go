package geturl

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v4"
)

// companionCall is the extension's request to the running control plane.
func companionCall(t *testing.T, b *bridge, method, path, auth, body string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, b.controlURL(path), rd)
	req.Header.Set("Origin", "chrome-extension://abcdefghijklmnopabcdefghijklmnop")
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// The companion on the real control plane: a device pairs, the operator
// approves it through the keyed API (the CLI's), the device binds a
// conversation and the prompt's Init works at the data plane until the
// device disconnects.
func TestCompanionThroughTheControlPlane(t *testing.T) {
	b := startBridge(t, nil)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hi\n"), 0o644)
	b.project(t, dir, "demo", false)

	var raw [32]byte
	rand.Read(raw[:])
	secret := base64.RawURLEncoding.EncodeToString(raw[:])
	st, pr := companionCall(t, b, "POST", "/companion/pair", "", `{"name":"test browser","secret":"`+secret+`"}`)
	if st != http.StatusCreated {
		t.Fatalf("pair: %d %v", st, pr)
	}
	var list struct {
		Companion struct {
			Pending []struct{ Request, Code string }
		}
	}
	b.call(t, "GET", "/api/companion", nil, &list)
	if len(list.Companion.Pending) != 1 || list.Companion.Pending[0].Code != pr["code"] {
		t.Fatalf("pending: %+v", list)
	}
	b.call(t, "POST", "/api/companion/approve/"+pr["request"].(string), nil, nil)
	cred := pr["device"].(string) + "." + secret

	st, bound := companionCall(t, b, "POST", "/companion/bind", cred, `{"project":"demo","conversation":"https://chat.example/c/1"}`)
	if st != http.StatusCreated || bound["lease_ms"] != float64(15000) || bound["heartbeat_ms"] != float64(5000) {
		t.Fatalf("bind: %d %v", st, bound)
	}
	prompt := bound["prompt"].(string)
	initURL := prompt[strings.Index(prompt, "http://"):]
	if st, body := get(t, initURL); st != 200 || !strings.Contains(body, `"bases"`) {
		t.Fatalf("Init while bound: %d %s", st, body)
	}
	if st, _ := companionCall(t, b, "POST", "/companion/disconnect", cred, `{"binding":"`+bound["binding"].(string)+`"}`); st != 200 {
		t.Fatalf("disconnect: %d", st)
	}
	if st, body := get(t, initURL); st != http.StatusNotFound {
		t.Fatalf("Init after disconnect: %d %s", st, body)
	}
	// A page's request never reaches it.
	req, _ := http.NewRequest("GET", b.controlURL("/companion/projects"), nil)
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Authorization", "Bearer "+cred)
	if st := do(t, req); st != http.StatusForbidden {
		t.Fatalf("a page's request: %d", st)
	}
}

// companion.lease: a duration from hub.yaml, within 2s..5m.
func TestCompanionLeaseConfig(t *testing.T) {
	for _, c := range []struct {
		yaml string
		ok   bool
		want time.Duration
	}{
		{"", true, 15 * time.Second},
		{"companion: {lease: 30s}", true, 30 * time.Second},
		{"companion: {lease: 2s}", true, 2 * time.Second},
		{"companion: {lease: 1s}", false, 0},
		{"companion: {lease: 6m}", false, 0},
	} {
		cfg := NewConfig()
		if err := yaml.Unmarshal([]byte(c.yaml), cfg); err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		err := cfg.Validate()
		if (err == nil) != c.ok || (c.ok && cfg.Companion.lease() != c.want) {
			t.Errorf("%q: %v, lease %s", c.yaml, err, cfg.Companion.lease())
		}
	}
}
