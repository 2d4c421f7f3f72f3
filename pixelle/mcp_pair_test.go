package pixelle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub/mcpserver"
)

// mcpSessionOf serves m's tools on a server and connects an SDK client
// to it in memory.
func mcpSessionOf(t *testing.T, m *mcpTools) *mcp.ClientSession {
	t.Helper()
	srv := mcpserver.New(mcpserver.Options{Name: "t", Version: "1"})
	defs, call := m.tools()
	if _, dropped := srv.Forward(mcpserver.Identity, call).Sync(context.Background(), defs); len(dropped) > 0 {
		t.Fatalf("dropped %v", dropped)
	}
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cancel(); <-done })
	return cs
}

// An agent pairs a canvas itself with the code the person gives it (the
// relay's rules unchanged: a wrong or used code is refused), and
// pixelle_wait blocks until a paired canvas is connected, greeting it
// with its state; every answer without a canvas says what the person
// does.
func TestMCPPairAndWait(t *testing.T) {
	r := startRelay(t, nil)
	id, tok := r.createSession(t)
	b := r.browser(t, id, tok)
	url := r.URL("")
	looks := make(chan string, 16)
	dirs := adaptertest.TempDirs(t)
	m := &mcpTools{dirs: dirs, relay: func(context.Context) (string, error) { return url, nil }, poll: 5 * time.Millisecond,
		looked: func(why string) {
			select {
			case looks <- why:
			default:
			}
		}}
	cs := mcpSessionOf(t, m)

	// Not paired: the wait ends (a normal result) saying what to do.
	if text, isErr := callTool(t, cs, "pixelle_wait", map[string]any{"timeoutSeconds": 0}); isErr ||
		!strings.Contains(text, "Still waiting") || !strings.Contains(text, "pixelle_pair") || !strings.Contains(text, "Connect locally") || !strings.Contains(text, url) {
		t.Fatalf("pixelle_wait unpaired = %q (isError %v)", text, isErr)
	}
	if text, isErr := callTool(t, cs, "pixelle_state", nil); !isErr || !strings.Contains(text, "call pixelle_pair") || !strings.Contains(text, "Connect locally") {
		t.Fatalf("pixelle_state unpaired = %q (isError %v)", text, isErr)
	}

	refusals := []struct {
		name string
		args map[string]any
		want string
	}{
		{"no code", map[string]any{}, `needs {"code"`},
		{"not a code", map[string]any{"code": "not-a-code"}, "INVALID_CODE"},
		{"a code the relay never issued", map[string]any{"code": "000000000000"}, "INVALID_OR_EXPIRED_CODE"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			if text, isErr := callTool(t, cs, "pixelle_pair", tc.args); !isErr || !strings.Contains(text, tc.want) {
				t.Fatalf("pixelle_pair %v = %q (isError %v), want %q", tc.args, text, isErr, tc.want)
			}
		})
	}
	if _, err := NewCredentialStore(dirs).Load(); err == nil {
		t.Fatal("a refused code stored a credential")
	}

	// The person's code (in any case) pairs; the browser hears it.
	c := code(t, b)
	text, isErr := callTool(t, cs, "pixelle_pair", map[string]any{"code": strings.ToLower(c)})
	if isErr || !strings.Contains(text, "Paired") || !strings.Contains(text, "pixelle_state") {
		t.Fatalf("pixelle_pair = %q (isError %v)", text, isErr)
	}
	if m := next(t, b); m["type"] != "paired" {
		t.Fatalf("the browser heard %v, not paired", m)
	}
	cr, err := NewCredentialStore(dirs).Load()
	if err != nil || cr.URL != url {
		t.Fatalf("stored credential = %+v %v", cr, err)
	}
	if strings.Contains(text, cr.Token) || strings.Contains(text, cr.SessionID) {
		t.Fatalf("pixelle_pair shows the credential: %q", text)
	}
	// A code is good once.
	if text, isErr := callTool(t, cs, "pixelle_pair", map[string]any{"code": c}); !isErr || !strings.Contains(text, "INVALID_OR_EXPIRED_CODE") {
		t.Fatalf("a used code = %q (isError %v)", text, isErr)
	}
	scriptedBrowser(t, b)
	if text, isErr := callTool(t, cs, "pixelle_wait", map[string]any{"timeoutSeconds": 1}); isErr ||
		!strings.Contains(text, "Connected") || !strings.Contains(text, `"title":"Example"`) {
		t.Fatalf("pixelle_wait paired = %q (isError %v)", text, isErr)
	}

	// The tab goes: a command says what to do; the wait blocks until the
	// tab is back.
	b.Close()
	adaptertest.WaitFor(t, "the relay to see the browser go", func() bool { return !r.browserAttached(id) })
	if text, isErr := callTool(t, cs, "pixelle_state", nil); !isErr || !strings.Contains(text, "BROWSER_OFFLINE") ||
		!strings.Contains(text, "Connect locally") || !strings.Contains(text, "pixelle_wait") {
		t.Fatalf("pixelle_state offline = %q (isError %v)", text, isErr)
	}
	for len(looks) > 0 {
		<-looks
	}
	type answer struct {
		text  string
		isErr bool
	}
	waited := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "pixelle_wait", Arguments: map[string]any{"timeoutSeconds": 60}})
		if err != nil {
			waited <- answer{err.Error(), true}
			return
		}
		waited <- answer{res.Content[0].(*mcp.TextContent).Text, res.IsError}
	}()
	select {
	case why := <-looks:
		if !strings.Contains(why, "not connected") || !strings.Contains(why, "Connect locally") {
			t.Fatalf("the wait's look found %q", why)
		}
	case a := <-waited:
		t.Fatalf("pixelle_wait returned without a canvas: %+v", a)
	case <-time.After(20 * time.Second):
		t.Fatal("pixelle_wait did not look")
	}
	b2 := r.browser(t, id, tok)
	scriptedBrowser(t, b2)
	select {
	case a := <-waited:
		if a.isErr || !strings.Contains(a.text, "Connected") || !strings.Contains(a.text, `"title":"Example"`) {
			t.Fatalf("pixelle_wait once the tab is back = %+v", a)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("pixelle_wait did not see the tab come back")
	}
}
