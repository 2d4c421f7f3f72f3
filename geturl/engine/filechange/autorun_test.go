package filechange

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/internal/treetest"
)

// autorunTree is a project with its tools' configuration: an agent's
// hooks, OpenCode's MCP servers and a plugin, an editor's tasks.
var autorunTree = map[string]string{
	".claude/settings.json":   "{\"hooks\":{}}\n",
	"opencode.json":           "{\"mcp\":{}}\n",
	".opencode/plugin/fmt.ts": "export const Fmt = async () => ({})\n",
	".vscode/tasks.json":      "{\"tasks\":[]}\n",
	".git/HEAD":               "ref: refs/heads/main\n",
	"a.txt":                   "a\n",
}

// autorunCases change configuration a tool runs on its own, once by each
// way the engine changes a file.
var autorunCases = map[string]func(e *Engine) error{
	"write .claude/settings.json": func(e *Engine) error {
		_, err := e.Write(context.Background(), ".claude/settings.json", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"id"}]}]}}`)
		return err
	},
	"edit opencode.json": func(e *Engine) error {
		_, err := e.Edit(context.Background(), "opencode.json", `"mcp":{}`, `"mcp":{"x":{"type":"local","command":["id"]}}`)
		return err
	},
	"patch adds a plugin": func(e *Engine) error {
		_, err := e.ApplyPatch(context.Background(), "*** Begin Patch\n*** Add File: .opencode/plugin/x.ts\n+export const X = async () => ({})\n*** End Patch")
		return err
	},
	"patch moves a task in": func(e *Engine) error {
		_, err := e.ApplyPatch(context.Background(), "*** Begin Patch\n*** Delete File: .vscode/tasks.json\n*** Update File: a.txt\n*** Move to: .vscode/tasks.json\n@@\n-a\n+{\"tasks\":[{\"command\":\"id\",\"runOptions\":{\"runOn\":\"folderOpen\"}}]}\n*** End Patch")
		return err
	},
}

// TestEngineRefusesAutorunConfig: an Engine whose Allow is the zero value
// — what a session without the terminal gets — refuses every change of
// configuration tools run on their own with autorun_config (not
// retryable, the hint saying why), and changes nothing.
func TestEngineRefusesAutorunConfig(t *testing.T) {
	for name, run := range autorunCases {
		t.Run(name, func(t *testing.T) {
			p := newProject(t, autorunTree)
			p.read(".claude/settings.json")
			before := treetest.Snapshot(t, p.root)
			err := run(p.eng)
			te, _ := err.(*fault.Error)
			if te == nil || te.Code != "autorun_config" || te.Retryable || te.Action != "" || te.Hint != AutorunHint {
				t.Fatalf("err = %s", body(t, err))
			}
			b, _ := json.Marshal(te)
			p.noHostPath("refusal", string(b))
			treetest.Same(t, "tree", before, treetest.Snapshot(t, p.root))
		})
	}
}

// TestEngineAllowsAutorunConfig: with Allow.Autorun (a session with the
// terminal) the same changes land; version-control metadata stays
// refused.
func TestEngineAllowsAutorunConfig(t *testing.T) {
	for name, run := range autorunCases {
		t.Run(name, func(t *testing.T) {
			p := newProject(t, autorunTree)
			p.read(".claude/settings.json")
			p.eng.Allow = sandbox.Allow{Autorun: true}
			if err := run(p.eng); err != nil {
				t.Fatalf("err = %s", body(t, err))
			}
		})
	}
	p := newProject(t, autorunTree)
	p.eng.Allow = sandbox.Allow{Autorun: true}
	_, err := p.eng.Write(context.Background(), ".vscode/.git/config", "[core]\n")
	if te, _ := err.(*fault.Error); te == nil || te.Code != "vcs_metadata" {
		t.Fatalf("err = %s", body(t, err))
	}
}
