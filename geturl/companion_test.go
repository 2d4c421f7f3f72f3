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

	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v4"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/geturl/control"
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

// runCLI runs `hub geturl ARGS…` against the bridge's state (HOME is the
// harness's) and answers stdout and the error.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut strings.Builder
	app := &cli.App{Name: "hub", Writer: &out, ErrWriter: &errOut, Commands: []*cli.Command{Command(adapters.CommandEnv{})},
		ExitErrHandler: func(*cli.Context, error) {}}
	err := app.Run(append([]string{"hub", "geturl"}, args...))
	return out.String(), err
}

// The operator's CLI: list shows a request with its code, approve pairs
// it, revoke ends the device's bindings; refusals exit non-zero with the
// control plane's code.
func TestCompanionCLI(t *testing.T) {
	b := startBridge(t, nil)
	dir := t.TempDir()
	b.project(t, dir, "demo", false)
	ask := func(name string) (request, cred string) {
		var raw [32]byte
		rand.Read(raw[:])
		secret := base64.RawURLEncoding.EncodeToString(raw[:])
		_, a := companionCall(t, b, "POST", "/companion/pair", "", `{"name":"`+name+`","secret":"`+secret+`"}`)
		return a["request"].(string), a["device"].(string) + "." + secret
	}
	req, cred := ask("cli laptop")
	other, _ := ask("stranger")

	out, err := runCLI(t, "companion", "list")
	if err != nil || !strings.Contains(out, req) || !strings.Contains(out, "cli laptop") || !strings.Contains(out, "PENDING") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if out, err := runCLI(t, "companion", "approve", req); err != nil || !strings.Contains(out, "approved") {
		t.Fatalf("approve: %v %s", err, out)
	}
	if out, err := runCLI(t, "companion", "refuse", other, "--json"); err != nil || !strings.Contains(out, `"done": "refuse"`) {
		t.Fatalf("refuse: %v %s", err, out)
	}
	out, err = runCLI(t, "companion", "approve", req, "--json")
	if err == nil || !strings.Contains(out, `"error": "request_not_pending"`) {
		t.Fatalf("approving twice: %v %s", err, out)
	}
	st, bound := companionCall(t, b, "POST", "/companion/bind", cred, `{"project":"demo","conversation":"https://chat.example/c/1"}`)
	if st != http.StatusCreated {
		t.Fatalf("bind: %d %v", st, bound)
	}
	out, err = runCLI(t, "companion", "list", "--json")
	var ov struct {
		Devices []struct {
			ID       string
			Bindings []struct{ Session string }
		}
	}
	if err != nil || json.Unmarshal([]byte(out), &ov) != nil || len(ov.Devices) != 1 || len(ov.Devices[0].Bindings) != 1 || ov.Devices[0].Bindings[0].Session != bound["session"] {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	if out, err := runCLI(t, "companion", "revoke", ov.Devices[0].ID); err != nil || !strings.Contains(out, "revoked") {
		t.Fatalf("revoke: %v %s", err, out)
	}
	if st, _ := companionCall(t, b, "GET", "/companion/projects", cred, ""); st != http.StatusUnauthorized {
		t.Fatalf("a device revoked from the CLI: %d", st)
	}
	if _, err := runCLI(t, "companion", "revoke"); err == nil {
		t.Fatal("revoke without a device succeeded")
	}
}

// The operator's companion API is the operator's only: the page's routes
// need the page's session and its own Origin, the keyed routes the control
// key and no Origin; a device's credential or an extension's Origin opens
// neither, so a device cannot approve itself.
func TestCompanionOperatorGates(t *testing.T) {
	b := startBridge(t, nil)
	sess := b.uiLogin(t)
	own := b.controlURL("")
	var raw [32]byte
	rand.Read(raw[:])
	secret := base64.RawURLEncoding.EncodeToString(raw[:])
	_, pr := companionCall(t, b, "POST", "/companion/pair", "", `{"name":"self-approver","secret":"`+secret+`"}`)
	req, dev := pr["request"].(string), pr["device"].(string)
	ext := "chrome-extension://abcdefghijklmnopabcdefghijklmnop"
	for name, tc := range map[string]struct {
		method, path, origin string
		headers              map[string]string
		want                 int
	}{
		"page list, session":             {"GET", "/ui/api/companion", "", map[string]string{control.SessionHeader: sess}, 200},
		"page list, nothing":             {"GET", "/ui/api/companion", "", nil, 401},
		"page list, device credential":   {"GET", "/ui/api/companion", ext, map[string]string{"Authorization": "Bearer " + dev + "." + secret}, 401},
		"page approve, extension origin": {"POST", "/ui/api/companion/approve/" + req, ext, map[string]string{control.SessionHeader: sess}, 403},
		"page approve, no origin":        {"POST", "/ui/api/companion/approve/" + req, "", map[string]string{control.SessionHeader: sess}, 403},
		"page approve, device":           {"POST", "/ui/api/companion/approve/" + req, own, map[string]string{"Authorization": "Bearer " + dev + "." + secret}, 401},
		"keyed list, no key":             {"GET", "/api/companion", "", nil, 401},
		"keyed list, extension origin":   {"GET", "/api/companion", ext, map[string]string{control.KeyHeader: b.key()}, 403},
		"keyed approve, page session":    {"POST", "/api/companion/approve/" + req, "", map[string]string{control.SessionHeader: sess}, 401},
		"keyed approve, device":          {"POST", "/api/companion/approve/" + req, ext, map[string]string{"Authorization": "Bearer " + dev + "." + secret}, 403},
		"keyed unknown op":               {"POST", "/api/companion/bless/" + req, "", map[string]string{control.KeyHeader: b.key()}, 404},
		"keyed refuse unknown request":   {"POST", "/api/companion/refuse/r0000000000000000", "", map[string]string{control.KeyHeader: b.key()}, 404},
	} {
		r, _ := http.NewRequest(tc.method, b.controlURL(tc.path), nil)
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		for k, v := range tc.headers {
			r.Header.Set(k, v)
		}
		if got := do(t, r); got != tc.want {
			t.Errorf("%s: %d, want %d", name, got, tc.want)
		}
	}
	if st, a := companionCall(t, b, "GET", "/companion/pair/"+req, dev+"."+secret, ""); a["state"] != "pending" {
		t.Fatalf("after all that the request is %d %v, want still pending", st, a)
	}
}
