package pixelle

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub"
)

// mcpSession serves the pixelle tools on a server and connects an SDK
// client to it in memory.
func mcpSession(t *testing.T, relay RelayFunc) (*mcp.ClientSession, hub.Dirs) {
	t.Helper()
	dirs := adaptertest.TempDirs(t)
	return mcpSessionOf(t, &mcpTools{dirs: dirs, relay: relay, poll: DefaultWaitPoll}), dirs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// Over MCP the canvas commands behave as `hub pixelle call` does: checked
// against §6 first, sent with the stored pairing, answered unchanged, and
// every refusal a tool error that says what to do.
func TestMCPTools(t *testing.T) {
	r := startRelay(t, nil)
	id, tok := r.createSession(t)
	b := r.browser(t, id, tok)
	url := r.URL("")
	up := func(context.Context) (string, error) { return url, nil }
	cs, dirs := mcpSession(t, up)

	if text, isErr := callTool(t, cs, "pixelle_state", nil); !isErr || !strings.Contains(text, "Not paired") || !strings.Contains(text, "hub pixelle pair") {
		t.Fatalf("unpaired: %q %v", text, isErr)
	}
	// Pair as `hub pixelle pair` does; the tools find the credential.
	c := &Client{Relay: url}
	cr, err := c.Pair(t.Context(), code(t, b))
	if err != nil {
		t.Fatal(err)
	}
	next(t, b) // paired
	scriptedBrowser(t, b)
	if err := NewCredentialStore(dirs).Save(cr); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name    string
		tool    string
		args    map[string]any
		isError bool
		want    string
	}{
		{"state", "pixelle_state", nil, false, stateFixture},
		{"selection", "pixelle_selection", nil, false, `"missing":[]`},
		{"a read through call", "pixelle_call", map[string]any{"command": map[string]any{"method": "state.read"}}, false, `"title":"Example"`},
		{"a conflict comes through with its hint", "pixelle_call", map[string]any{"command": map[string]any{
			"method": "nodes.delete", "expectedRevision": 4, "operationId": "conflict", "params": map[string]any{"ids": []string{"a"}}}},
			true, `"code":"REVISION_CONFLICT"`},
		{"checked before sending", "pixelle_call", map[string]any{"command": map[string]any{"method": "project.import"}}, true, "Invalid canvas command"},
		{"no command", "pixelle_call", map[string]any{}, true, `needs {"command"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text, isErr := callTool(t, cs, tc.tool, tc.args)
			if isErr != tc.isError || !strings.Contains(text, tc.want) {
				t.Fatalf("%s = %q (isError %v), want %q", tc.tool, text, isErr, tc.want)
			}
		})
	}
}

// The relay the tools use comes from the caller each time: none running,
// or one the stored pairing does not belong to, is said plainly.
func TestMCPToolsWithoutTheirRelay(t *testing.T) {
	cases := []struct {
		name  string
		relay RelayFunc
		saved string // the stored pairing's relay; "" for none
		want  string
	}{
		{"not running", func(context.Context) (string, error) { return "", errors.New("adapters.pixelle is disabled") }, "", "adapters.pixelle is disabled"},
		{"paired elsewhere", func(context.Context) (string, error) { return "http://127.0.0.1:4999", nil }, "http://127.0.0.1:4317", "belongs to the relay at http://127.0.0.1:4317"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs, dirs := mcpSession(t, tc.relay)
			if tc.saved != "" {
				if err := NewCredentialStore(dirs).Save(Credentials{SessionID: "s", Token: "t", URL: tc.saved}); err != nil {
					t.Fatal(err)
				}
			}
			if text, isErr := callTool(t, cs, "pixelle_selection", nil); !isErr || !strings.Contains(text, tc.want) {
				t.Fatalf("got %q %v, want %q", text, isErr, tc.want)
			}
		})
	}
}
